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
    assert view["HISTORIAN_MONGODB_URI"].startswith("mongodb://***:***@db.example:27017/")
    assert view["HISTORIAN_LLM_ROLES"]["judge"]["model"] == "m"


@pytest.fixture
def keyed(tmp_path, demo_users):
    from historian_blueprint.demo import create_app

    return create_app({"TESTING": True, "DEMO_HOME": str(tmp_path / "home"), "DEMO_LOAD_CORPUS": False,
                       "HISTORIAN_LLM_API_KEY": "sk-live-key-9999",
                       "HISTORIAN_LLM_BASE_URL": "https://ops:pw-live-5555@llm.example/v1?api_key=k-live-6666",
                       "HISTORIAN_LLM_ROLES": {"judge": {"base_url": "http://j:pw-role-7777@judge.example/v1"}}})


LIVE_SECRETS = ("sk-live-key-9999", "pw-live-5555", "k-live-6666", "pw-role-7777")


def test_config_api_is_admin_only_and_redacted(keyed):
    from tests.conftest import login

    researcher, admin = login(keyed.test_client()), login(keyed.test_client(), "root", "root-pw")
    assert researcher.get("/historian/api/config").status_code == 403
    response = admin.get("/historian/api/config")
    assert response.status_code == 200
    assert response.json["HISTORIAN_LLM_API_KEY"] == "***"
    assert not [secret for secret in LIVE_SECRETS if secret.encode() in response.data]
    assert response.json["HISTORIAN_LLM_BASE_URL"] == "https://***:***@llm.example/v1?api_key=***"
    assert response.json["HISTORIAN_LLM_ROLES"] == {"judge": {"base_url": "http://***:***@judge.example/v1"}}


def test_config_command_prints_redacted_json(keyed):
    result = keyed.test_cli_runner().invoke(args=["historian", "config"])
    assert result.exit_code == 0
    assert not [secret for secret in LIVE_SECRETS if secret in result.output]
    assert '"HISTORIAN_LLM_API_KEY": "***"' in result.output
    assert '"HISTORIAN_LLM_BASE_URL": "https://***:***@llm.example/v1?api_key=***"' in result.output


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


# Redaction by shape (issue 25): whatever setting holds a secret, its form gives it away.

def view_of(**settings):
    """``redacted`` of the settings resolved from ``HISTORIAN_<KEY>`` app.config values."""
    return cfg.redacted(cfg.resolve({cfg.PREFIX + key.upper(): value for key, value in settings.items()}, {},
                                    {}).as_config())


@pytest.mark.parametrize("role", ["planner", "composer", "judge", "mapper"])
def test_per_role_llm_base_urls_are_masked(role):
    roles = {role: {"model": "m-1", "base_url": "https://ro:pw-role-1@r.example:8443/v1?token=t-role-2&x=1",
                    "api_key": "plain-role-key-3"}}
    shown = view_of(llm_roles=roles)["HISTORIAN_LLM_ROLES"][role]
    assert shown == {"model": "m-1", "base_url": "https://***:***@r.example:8443/v1?token=***&x=1", "api_key": "***"}


def test_an_https_url_with_an_api_key_query_is_masked():
    shown = view_of(llm_base_url="https://llm.example/v1?api_key=k-query-1&API-Key=k-query-2&region=eu")
    assert shown["HISTORIAN_LLM_BASE_URL"] == "https://llm.example/v1?api_key=***&API-Key=***&region=eu"


def test_user_and_password_in_an_http_base_url_are_masked():
    shown = view_of(llm_base_url="http://alice:pw-basic-1@localhost:11434/v1")["HISTORIAN_LLM_BASE_URL"]
    assert shown == "http://***:***@localhost:11434/v1"
    assert cfg.redact_uri("https://tok-user-only-2@git.example/x.git") == "https://***@git.example/x.git"


def test_the_aws_session_token_in_a_mongodb_uri_is_masked():
    uri = ("mongodb+srv://AKIDEXAMPLE:aws-secret-1@cluster0.example.net/db?authSource=%24external"
           "&authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:FQoGZXIvYXdzEXAMPLE2&retryWrites=true")
    shown = view_of(mongodb_uri=uri)["HISTORIAN_MONGODB_URI"]
    assert "FQoGZXIvYXdzEXAMPLE2" not in shown and "aws-secret-1" not in shown and "AKIDEXAMPLE" not in shown
    assert shown.startswith("mongodb+srv://***:***@cluster0.example.net/db?")
    assert "authMechanismProperties=***" in shown and shown.endswith("&retryWrites=true")


def test_a_multi_host_mongodb_uri_keeps_its_hosts_and_options():
    uri = "mongodb://u:pw-multi-1@h1.example:27017,h2.example:27017,h3.example/db?replicaSet=rs0&tls=true&w=majority"
    assert view_of(mongodb_uri=uri)["HISTORIAN_MONGODB_URI"] == (
        "mongodb://***:***@h1.example:27017,h2.example:27017,h3.example/db?replicaSet=rs0&tls=true&w=majority")


@pytest.mark.parametrize("scheme", ["mongodb", "mongodb+srv", "http", "https", "redis", "rediss", "postgres",
                                    "postgresql+psycopg", "amqp", "ftp"])
def test_the_user_info_of_any_scheme_is_masked(scheme):
    assert cfg.redact_uri(f"{scheme}://usr-1:pw-2@host.example:1234/p/q") == f"{scheme}://***:***@host.example:1234/p/q"


@pytest.mark.parametrize("name", ["key", "apiKey", "x-api-key", "access_token", "client_secret", "password", "passwd",
                                  "pwd", "auth", "X-Amz-Signature", "sig", "X-Goog-Credential", "sessionToken",
                                  "tlsCertificateKeyFilePassword", "authMechanismProperties", "api%5Fkey"])
def test_secret_looking_query_parameters_are_masked_and_others_kept(name):
    uri = f"https://h.example/p?replicaSet=rs0&{name}=s3cr3t-value&tls=true&retryWrites=false#{name}=frag-s3cr3t"
    assert cfg.redact_uri(uri) == f"https://h.example/p?replicaSet=rs0&{name}=***&tls=true&retryWrites=false#{name}=***"


def test_values_under_a_secret_name_are_masked_at_any_depth():
    from historian_blueprint.redaction import redact_value

    nested = {"outer": [{"apiKey": "short", "password": 1234, "author": "Ida", "max_tokens": 512, "token": None}]}
    assert redact_value(nested) == {"outer": [{"apiKey": "***", "password": "***", "author": "Ida", "max_tokens": 512,
                                               "token": None}]}
    assert redact_value({"client_secret": {"a": 1, "b": 2}, "keys": []}) == {"client_secret": {"***": "2 entries"},
                                                                            "keys": []}


@pytest.mark.parametrize("token", [
    "sk-proj-AbCdEf0123456789", "sk-ant-api03-xyzXYZ0123", "ghp_0123456789abcdefABCDEF0123",
    "hf_AbCdEfGhIjKlMnOpQrStUv",
    "AKIAIOSFODNN7EXAMPLE", "d41d8cd98f00b204e9800998ecf8427e", "iKcdnN4YbNaTw4tq6PbSclo7ELBZ/r5/Qc0pnPOM",
    "Zx9Kq2LmT7vRw4Nb8Yc1Hd6Jf3Gs5Pa0", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXBhcnQ",
    "q8w3e7r1t5y9u2i6o4p0a8s3d7f1g5h9", "Z1dCVKRZ4WJ3F8X6N2B7M5Q9P0L3T8Y4",
])
def test_bearer_like_tokens_are_masked_in_any_setting(token):
    view = view_of(admin_role=token, llm_model=f"Bearer {token}", fields={"author": [token, "creator"]},
                   map_document_types={token: 0.5})
    assert token not in repr(view)
    assert view["HISTORIAN_ADMIN_ROLE"] == "***" and view["HISTORIAN_LLM_MODEL"] == "Bearer ***"
    assert view["HISTORIAN_FIELDS"]["author"] == ["***", "creator"]
    assert view["HISTORIAN_MAP_DOCUMENT_TYPES"] == {"***": 0.5}
    if "/" not in token:  # in a URL "/" parts the path: a key there is one path segment, masked, the path kept
        shown = view_of(source_url=f"https://h.example/{token}/doc")["HISTORIAN_SOURCE_URL"]
        assert shown == "https://h.example/***/doc"


@pytest.mark.parametrize("value", [
    "http://localhost:11434/v1", "https://api.openai.com/v1", "mongodb://db.example:27017/railroad?replicaSet=rs0",
    "gpt-4o-mini", "claude-3-5-sonnet-20241022", "sentence-transformers/all-MiniLM-L6-v2",
    "meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo", "TheBloke/Llama-2-13B-chat-GPTQ-4bit-128g",
    "HistorianRailroadDocumentsV2Collection", "/srv/historian/data", "~/.cache/historian/onnx",
    "/root/.cache/huggingface/hub/models--x/snapshots/c9745ed1d9f207416be6d2e6f8de32d1f16199bf",
    "C:\\historian\\models\\all-MiniLM-L6-v2", "research", "historian/base.html", "/doc/{source_id}", cfg.DEFAULT_CSP,
    "mailto:ops@example.org", "https://registry.example/@scope/pkg", "https://h.example:8080/a@b",
])
def test_ordinary_values_are_left_intact(value):
    from historian_blueprint.redaction import redact_value

    assert redact_value(value) == value
    mixed = {"model": value, "n": 3, "on": True, "w": 0.5}
    assert redact_value(mixed) == mixed


def test_every_profile_and_the_defaults_come_back_unmasked():
    for profile in cfg.PROFILES:
        settings = cfg.resolve({}, {"profile": profile}, {}).as_config()
        assert cfg.redacted(settings) == settings, profile
    plain = view_of(llm_base_url="https://llm.example/v1", llm_model="gpt-4o-mini", data_dir="/srv/h")
    assert (plain["HISTORIAN_LLM_BASE_URL"], plain["HISTORIAN_LLM_MODEL"]) == ("https://llm.example/v1", "gpt-4o-mini")


@pytest.mark.parametrize("value", [
    None, 0, -1.5, True, "", "://", "http://", "http://@", "a://@@@?&&==#", "mongodb://:@/?=&", "http://[::1", "%%%",
    "https://u:p#ss@host/db", "http://u:p/ss@host/x", "redis://u:p?w@host", b"bytes", object(), ["x", None, 3],
    {"k": {"l": [{"m": None}]}}, {1: "int key"}, ("tuple", "of", "strings"), "x" * 10_000, "@" * 300 + "://" * 300,
])
def test_odd_input_never_crashes(value):
    from historian_blueprint.redaction import redact_value

    shown = redact_value(value)
    cfg.redacted({"HISTORIAN_MONGODB_URI": value, "HISTORIAN_LLM_ROLES": value, "HISTORIAN_API_TOKENS": value})
    assert cfg.redact_uri(value) is not None or value is None
    for secret in ("p#ss", "p/ss", "p?w"):
        assert not (isinstance(value, str) and secret in value and secret in shown)


def test_a_deep_or_cyclic_value_is_masked_not_recursed_forever():
    from historian_blueprint.redaction import redact_value

    cyclic: dict = {}
    cyclic["self"] = cyclic
    deep: list = ["sk-deep-secret-1"]
    for _ in range(200):
        deep = [deep]
    assert "***" in repr(redact_value(cyclic)) and "sk-deep-secret-1" not in repr(redact_value(deep))


def test_no_generated_url_ever_shows_its_credentials():
    """300 URLs of random schemes, hosts and credentials (percent-encoded or raw, with : @ # ? / & = in them):
    neither the password, nor the user, nor a secret query value survives redaction."""
    import random
    from urllib.parse import quote

    rng = random.Random(25)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@#?/%"
    schemes = ["mongodb", "mongodb+srv", "http", "https", "redis", "postgres", "amqp", "ftp"]
    names = ["api_key", "token", "secret", "password", "sig", "X-Amz-Credential", "sessionToken", "auth"]
    for case in range(300):
        raw = case % 2 == 1
        user = "U" + "".join(rng.choice(alphabet[:62]) for _ in range(rng.randint(6, 14)))
        password = "P" + "".join(rng.choice(alphabet) for _ in range(rng.randint(8, 24)))
        hosts = ",".join(f"h{i}.example:{rng.randint(1, 65535)}" for i in range(rng.randint(1, 3)))
        query_secret = "Q" + "".join(rng.choice(alphabet[:66]) for _ in range(rng.randint(8, 24)))
        query = f"?replicaSet=rs{case}&{rng.choice(names)}={query_secret}&tls=true"
        if case % 3 == 0:
            query += f"&authMechanismProperties=AWS_SESSION_TOKEN:{query_secret}"
        url = (f"{rng.choice(schemes)}://{user}:{password if raw else quote(password, safe='')}@{hosts}/db{case}"
               + query)
        view = cfg.redacted({"HISTORIAN_LLM_BASE_URL": url, "HISTORIAN_LLM_ROLES": {"judge": {"base_url": url}},
                             "HISTORIAN_MONGODB_URI": url})
        text = repr(view)
        for secret in (user, password, quote(password, safe=""), query_secret):
            assert secret not in text, (url, view["HISTORIAN_LLM_BASE_URL"])
        assert f"@{hosts}/db{case}" in view["HISTORIAN_MONGODB_URI"] or raw, url


def test_a_password_with_a_space_is_masked_and_a_second_url_too():
    from historian_blueprint.redaction import redact_text

    assert redact_text("mongodb://admin:pass word@host/db") == "mongodb://***:***@host/db"
    shown = redact_text("mongodb://u:p@h/db see also https://x:secret-y@z/")
    assert "secret-y" not in shown and shown.startswith("mongodb://***:***@h/db")
