"""Configuration: precedence, validation of unknown keys and values, redaction of secrets."""

from __future__ import annotations

import re

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
    view = cfg.redacted(resolved.as_config())
    text = repr(view)
    for secret in ("sk-very-secret-1234", "hunter2pass", "tok-abcdef-secret", "sk-judge-secret"):
        assert secret not in text
    assert view["HISTORIAN_MONGODB_URI"].startswith("mongodb://reader:***@db.example")
    assert view["HISTORIAN_LLM_ROLES"]["judge"]["model"] == "m"


@pytest.fixture
def keyed(tmp_path, demo_users):
    from historian_blueprint.demo import create_app

    return create_app({"TESTING": True, "DEMO_HOME": str(tmp_path / "home"), "DEMO_LOAD_CORPUS": False,
                       "HISTORIAN_LLM_API_KEY": "sk-live-key-9999"})


def test_config_api_is_admin_only_and_redacted(keyed):
    from tests.conftest import login

    researcher, admin = login(keyed.test_client()), login(keyed.test_client(), "root", "root-pw")
    assert researcher.get("/historian/api/config").status_code == 403
    response = admin.get("/historian/api/config")
    assert response.status_code == 200
    assert response.json["HISTORIAN_LLM_API_KEY"] == "***"
    assert b"sk-live-key-9999" not in response.data


def test_config_command_prints_redacted_json(keyed):
    result = keyed.test_cli_runner().invoke(args=["historian", "config"])
    assert result.exit_code == 0
    assert "sk-live-key-9999" not in result.output
    assert '"HISTORIAN_LLM_API_KEY": "***"' in result.output


def test_the_llm_timeout_takes_fractions_of_a_second():
    from historian_blueprint import config as cfg

    assert cfg.resolve({}, {}, {"HISTORIAN_LLM_TIMEOUT_S": "0.5"}).llm_timeout_s == 0.5
    with pytest.raises(cfg.ConfigError, match="LLM_TIMEOUT_S"):
        cfg.resolve({}, {}, {"HISTORIAN_LLM_TIMEOUT_S": "soon"})


def test_the_configuration_table_is_generated_from_the_settings():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "docs" / "configuration.md").read_text(encoding="utf-8")
    start = readme.index("-->\n", readme.index("<!-- settings table")) + 4
    assert readme[start:readme.index("<!-- end of settings table")] == cfg.table()


def test_every_setting_has_a_type_and_a_description():
    for name, info in cfg.Settings.model_fields.items():
        assert info.annotation is not None and info.description and len(info.description) > 8, name


def test_settings_bounds_are_enforced(tmp_path):
    for key, value in (("HISTORIAN_RETRIEVAL_TOP_K", 0), ("HISTORIAN_LLM_MAX_RETRIES", -1),
                       ("HISTORIAN_VERIFY_CHALLENGE_CAP", 1.5), ("HISTORIAN_MAP_MAX_ROUNDS", 9),
                       ("HISTORIAN_AUTO_MIGRATE", "yes")):
        with pytest.raises(ConfigError, match=key):
            Historian(make_app(tmp_path, **{key: value}))


def test_settings_are_read_once_at_init(tmp_path):
    from historian_blueprint import get_settings

    app = make_app(tmp_path, HISTORIAN_RETRIEVAL_TOP_K=15)
    Historian(app)
    assert app.config["HISTORIAN_RETRIEVAL_TOP_K"] == 15 and get_settings(app).retrieval_top_k == 15
    assert app.config["HISTORIAN_PROFILE"] == "default"  # the whole resolved set is mirrored for the host


def test_the_readme_is_short_and_links_every_doc_page():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert readme.splitlines()[:40].count("```sh") == 1 and "./dev demo" in readme and "./dev test" in readme
    for page in sorted((root / "docs").glob("*.md")):
        assert f"(docs/{page.name})" in readme, f"the README does not link docs/{page.name}"


def test_a_mapping_setting_is_replaced_whole_by_a_higher_layer_never_merged():
    """A token revoked in app.config is gone, though the environment still lists it."""
    settings = cfg.resolve({"HISTORIAN_API_TOKENS": {"tok-new": {"user": "ops"}}}, {},
                           {"HISTORIAN_API_TOKENS": '{"tok-old": {"user": "gone"}}'})
    assert settings.api_tokens == {"tok-new": {"user": "ops"}}
    roles = cfg.resolve({"HISTORIAN_LLM_ROLES": {"judge": {"model": "m"}}}, {},
                        {"HISTORIAN_LLM_ROLES": '{"judge": {"api_key": "sk-env"}}'})
    assert roles.llm_roles == {"judge": {"model": "m"}}


def test_an_error_message_never_shows_a_secret():
    with pytest.raises(ConfigError) as bad:
        cfg.resolve({"HISTORIAN_LLM_ROLES": {"jduge": {"api_key": "sk-SECRET-1"}}}, {}, {})
    assert "sk-SECRET-1" not in str(bad.value) and "jduge" in str(bad.value)
    with pytest.raises(ConfigError) as bad:
        cfg.resolve({"HISTORIAN_API_TOKENS": ["tok-SECRET-2"]}, {}, {})
    assert "tok-SECRET-2" not in str(bad.value)


def test_credentials_in_any_url_setting_are_masked():
    view = cfg.redacted(cfg.resolve({"HISTORIAN_LLM_BASE_URL": "https://bob:pw-123@llm.example/v1?api-key=k-456",
                                     "HISTORIAN_LLM_ROLES": {"judge": {"base_url": "https://u:pw-789@j.example/v1"}}},
                                    {}, {}).as_config())
    assert not {"pw-123", "k-456", "pw-789"} & set(re.split(r"[:@/?=&]", repr(view)))


def test_an_empty_environment_variable_is_not_set(tmp_path, monkeypatch):
    monkeypatch.setenv("HISTORIAN_API_TOKENS", "")
    monkeypatch.setenv("HISTORIAN_PROFILE", "")
    app = make_app(tmp_path)
    Historian(app)
    assert app.config["HISTORIAN_API_TOKENS"] == {} and app.config["HISTORIAN_PROFILE"] == "default"
