"""Configuration: precedence, validation of unknown keys and values, redaction of secrets."""

from __future__ import annotations

import pytest
from flask import Flask

from historian_blueprint import ConfigError, Historian
from historian_blueprint import config as cfg


def make_app(tmp_path, **config):
    app = Flask(__name__, instance_path=str(tmp_path / "instance"))
    app.config.update(config)
    return app


def test_defaults_are_applied_with_setdefault(tmp_path):
    app = make_app(tmp_path)
    Historian(app)
    assert app.config["HISTORIAN_URL_PREFIX"] == "/historian"
    assert app.config["HISTORIAN_DB_NAME"] == "railroad_documents"
    assert app.config["HISTORIAN_COLLECTION"] == "documents"
    assert app.config["HISTORIAN_RETRIEVAL_TOP_K"] == 12
    assert app.config["HISTORIAN_FIELDS"]["text"] == "content"


def test_precedence_default_profile_env_options_app_config(tmp_path, monkeypatch):
    # default: top_k 12, rerank_k 6; research profile: top_k 20, rerank_k 10, timeout 180
    monkeypatch.setenv("HISTORIAN_PROFILE", "research")
    monkeypatch.setenv("HISTORIAN_RETRIEVAL_RERANK_K", "9")
    monkeypatch.setenv("HISTORIAN_LIMITS_TIMEOUT_S", "90")
    monkeypatch.setenv("HISTORIAN_VERIFY_CHALLENGE_CAP", "0.2")
    app = make_app(tmp_path, HISTORIAN_LIMITS_TIMEOUT_S=45)
    Historian(app, verify_challenge_cap=0.25, limits_max_question_chars=800)
    c = app.config
    assert c["HISTORIAN_PROFILE"] == "research"
    assert c["HISTORIAN_RETRIEVAL_TOP_K"] == 20          # profile beats default
    assert c["HISTORIAN_RETRIEVAL_RERANK_K"] == 9        # environment beats profile
    assert c["HISTORIAN_VERIFY_CHALLENGE_CAP"] == 0.25   # options beat environment
    assert c["HISTORIAN_LIMITS_TIMEOUT_S"] == 45         # app config beats everything
    assert c["HISTORIAN_LIMITS_MAX_QUESTION_CHARS"] == 800
    assert c["HISTORIAN_VERIFY_MAX_REVISION_ATTEMPTS"] == 3  # from the research profile


def test_profile_chosen_in_app_config_wins_over_env(tmp_path, monkeypatch):
    monkeypatch.setenv("HISTORIAN_PROFILE", "research")
    app = make_app(tmp_path, HISTORIAN_PROFILE="course")
    Historian(app)
    assert app.config["HISTORIAN_RETRIEVAL_TOP_K"] == 8


def test_unknown_key_in_app_config_is_named(tmp_path):
    app = make_app(tmp_path, HISTORIAN_RETRIEVAL_TOPK=5)
    with pytest.raises(ConfigError, match="HISTORIAN_RETRIEVAL_TOPK"):
        Historian(app)


def test_unknown_env_variable_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("HISTORIAN_RETREIVAL_TOP_K", "5")
    with pytest.raises(ConfigError, match="HISTORIAN_RETREIVAL_TOP_K"):
        Historian(make_app(tmp_path))


def test_demo_and_test_env_variables_are_not_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("HISTORIAN_DEMO_HOME", str(tmp_path))
    Historian(make_app(tmp_path))


@pytest.mark.parametrize(
    "key,value,message",
    [
        ("HISTORIAN_RETRIEVAL_TOP_K", "many", "expected an integer"),
        ("HISTORIAN_URL_PREFIX", "/", "site root"),
        ("HISTORIAN_ENGINE", "gpt", "embedded"),
        ("HISTORIAN_FIELDS", {"body": "text"}, "unknown field"),
        ("HISTORIAN_INDEX_CHUNK_OVERLAP", 600, "half the chunk size"),
        ("HISTORIAN_PROFILE", "fast", "not one of"),
        ("HISTORIAN_INDEX_ENCODER", "cuda", "'auto'"),
    ],
)
def test_bad_values_fail_early_with_the_key(tmp_path, key, value, message):
    with pytest.raises(ConfigError, match=message):
        Historian(make_app(tmp_path, **{key: value}))


def test_bad_env_value_names_the_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("HISTORIAN_RETRIEVAL_TOP_K", "[1, 2")
    with pytest.raises(ConfigError, match="HISTORIAN_RETRIEVAL_TOP_K"):
        Historian(make_app(tmp_path))


def test_redacted_view_hides_every_secret():
    resolved = cfg.resolve(
        {
            "HISTORIAN_LLM_API_KEY": "sk-very-secret-1234",
            "HISTORIAN_MONGODB_URI": "mongodb://reader:hunter2pass@db.example:27017/?authSource=admin",
            "HISTORIAN_API_TOKENS": {"tok-abcdef-secret": {"user": "bot"}},
            "HISTORIAN_LLM_ROLES": {"judge": {"model": "m", "api_key": "sk-judge-secret"}},
        },
        {},
        {},
    )
    view = cfg.redacted(resolved)
    text = repr(view)
    for secret in ("sk-very-secret-1234", "hunter2pass", "tok-abcdef-secret", "sk-judge-secret"):
        assert secret not in text
    assert view["HISTORIAN_MONGODB_URI"].startswith("mongodb://reader:***@db.example")
    assert view["HISTORIAN_LLM_ROLES"]["judge"]["model"] == "m"


def test_config_api_is_admin_only_and_redacted(app, admin, researcher):
    app.config["HISTORIAN_LLM_API_KEY"] = "sk-live-key-9999"
    assert researcher.get("/historian/api/config").status_code == 403
    response = admin.get("/historian/api/config")
    assert response.status_code == 200
    assert response.json["HISTORIAN_LLM_API_KEY"] == "***"
    assert b"sk-live-key-9999" not in response.data


def test_config_command_prints_redacted_json(app, runner):
    app.config["HISTORIAN_LLM_API_KEY"] = "sk-cli-secret"
    result = runner.invoke(args=["historian", "config"])
    assert result.exit_code == 0
    assert "sk-cli-secret" not in result.output
    assert '"HISTORIAN_LLM_API_KEY": "***"' in result.output


def test_the_llm_timeout_takes_fractions_of_a_second():
    from historian_blueprint import config as cfg

    assert cfg.resolve({}, {}, {"HISTORIAN_LLM_TIMEOUT_S": "0.5"})["HISTORIAN_LLM_TIMEOUT_S"] == 0.5
    with pytest.raises(cfg.ConfigError, match="LLM_TIMEOUT_S"):
        cfg.resolve({}, {}, {"HISTORIAN_LLM_TIMEOUT_S": "soon"})
