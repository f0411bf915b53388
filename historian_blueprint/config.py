"""Historian's settings: one typed definition (pydantic-settings), its sources, and their redaction.

Every setting is a field of ``Settings`` with its type, bounds and a one-line description; docs/configuration.md's
configuration table is generated from them (``python -m historian_blueprint.config --table``; a test keeps
them equal). Values are layered, later wins: the defaults here < the YAML profile chosen by
``HISTORIAN_PROFILE`` < environment variables ``HISTORIAN_<KEY>`` (parsed as YAML) < keyword options of
``Historian(app, **options)`` < keys the host set in ``app.config`` before ``init_app``. An unknown key or a bad
value raises ``ConfigError`` naming it. The settings are read once, at ``init_app``; the app keeps them
(``historian_blueprint.services.get_settings()``) and mirrors them into ``app.config`` for the host to read.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, Literal, get_args

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from historian_blueprint.redaction import redact_uri, redact_value, secret_name  # noqa: F401 - redact_uri re-exported
from historian_blueprint.resources import resource_path

PREFIX = "HISTORIAN_"
Profile = Literal["default", "research", "course"]
PROFILES: tuple[str, ...] = get_args(Profile)  # the one list of profiles: settings, pages, CLI and API read it
NON_CONFIG_ENV = ("HISTORIAN_DEMO_", "HISTORIAN_TEST_")  # environment variables with the prefix that are not settings
DEFAULT_FIELDS = {"id": "_id", "title": "title", "text": "content", "author": "author", "date": "date", "url": "url",
                  "pages": "pages", "year": "year", "collection": "collection"}
# The LLM engine's roles and what HISTORIAN_LLM_ROLES may set for each (defaults: settings.py).
ROLES = ("planner", "composer", "challenger", "interrogator", "counter_arguer", "judge", "refiner", "mapper")
ROLE_OPTIONS = ("model", "temperature", "max_tokens", "timeout", "base_url", "api_key")
# The Content-Security-Policy of Historian's pages. They carry no inline script and no inline style; the one
# inline style allowed, by its hash, is the stylesheet cytoscape inserts for its container
# (".__________cytoscape_container { position: relative; }").
CYTOSCAPE_STYLE_HASH = "'sha256-pgvDUBa4IjFA2yuSJ2cqcyxmNYJMborsd0ORcRv9vw8='"
DEFAULT_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' " + CYTOSCAPE_STYLE_HASH + "; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)

SECRET_KEYS = {"LLM_API_KEY", "API_TOKENS"}


class ConfigError(ValueError):
    """A Historian configuration key or value is wrong."""


def _f(default: Any, description: str, **bounds: Any) -> Any:
    return Field(default, description=description, **bounds)


class Settings(BaseSettings):
    """Every Historian setting. Field ``x_y`` is the key ``HISTORIAN_X_Y``."""

    model_config = SettingsConfigDict(env_prefix=PREFIX, extra="forbid", frozen=True, strict=True,
                                      validate_default=True)

    profile: Profile = _f(
        "default", "`default`, `research` (more evidence, longer timeouts) or `course` (quick, stricter)")
    url_prefix: str = _f("/historian", "where the blueprint is mounted (not `/`)")
    base_template: str = _f("historian/base.html", "the template Historian's pages extend (a host's own layout)")
    source_url: str | None = _f(None, "the host's document URL pattern for citation links (`/doc/{source_id}`)")
    data_dir: str | None = _f(None, "embedded store and index files (none: `<instance>/historian`)")
    auto_migrate: bool = _f(False, "apply pending schema migrations at start-up")
    login_required: bool = _f(True, "require a logged-in user (or an API token)")
    admin_role: str = _f("admin", "the value of `current_user.role` that makes an admin")
    api_tokens: dict[str, Any] = _f({}, '`{token: {"user": name, "role": role}}` for scripts (secret)')
    engine: Literal["embedded", "llm"] = _f("embedded", "`embedded` (offline) or `llm` (an OpenAI-compatible endpoint)")
    mongodb_uri: str | None = _f(None, "MongoDB URI (none: the embedded litemongo store)")
    db_name: str = _f("railroad_documents", "database name")
    collection: str = _f("documents", "the host's documents collection")
    collection_prefix: str = _f("historian_", "prefix of Historian's own collections")
    fields: dict[str, str | list[str] | None] = _f(
        dict(DEFAULT_FIELDS), "the host documents' field names (`id`, `title`, `text`, `author`, `date`, `url`, "
        "`pages`, `year`, `collection`); a field other than `id`, `title`, `text` may list several (the first filled "
        "wins: `\"author\": [\"speaker\", \"creator\"]`) or be none (not read: an uploader is no author)")
    index_chunk_size: int = _f(700, "chunk length, characters", ge=100)
    index_chunk_overlap: int = _f(150, "overlap of consecutive chunks, characters (under half the chunk size)", ge=0)
    index_embedding_model: str | None = _f(None, "a sentence-transformers model folder (none: the bundled "
                                           "all-MiniLM-L6-v2)")
    index_batch_size: int = _f(8, "embedding batch size (small batches pad less); progress every 16 batches",
                               ge=1, le=1024)
    index_encoder: Literal["auto", "int8", "onnx", "torch", "static"] = _f(
        "auto", "the encoder of the index and the queries: `auto` (fp32 ONNX when it reproduces the model, else "
        "PyTorch), `onnx`, `torch`, `int8` (the shipped int8 graph: about twice as fast to build, ranks a little "
        "worse) or `static` (token vectors distilled from the model: hundreds of times faster, ranks worse); see the "
        "search index docs; changing it asks for `reindex --full`")
    index_device: Literal["auto", "cpu", "cuda"] = _f(
        "auto", "where the encoder runs: `auto` (a CUDA GPU when ONNX Runtime's CUDA provider, from `onnxruntime-gpu`, "
        "or PyTorch can use one; else the CPU), `cpu`, or `cuda` (an error where there is none)")
    index_encoder_check: int = _f(500, "chunks of a build's own sampled again by the exact model on the CPU when its "
                                  "vectors are not that model's (`int8`, `static`, a GPU): the build reports how much "
                                  "of the exact model's top 10 its search keeps (0: not measured)", ge=0, le=20_000)
    index_context_header: bool = _f(True, 'index each chunk with a "title — author — date" line (changing it '
                                    "re-embeds every document)")
    index_encoder_cache: str | None = _f(None, "where the exported ONNX graph is kept (none: "
                                         "`~/.cache/historian/onnx`)")
    index_approximate_above: int = _f(200_000, "chunk count above which `HISTORIAN_INDEX_DENSE=auto` uses the "
                                      "approximate (IVF) index", ge=0)
    index_dense: Literal["auto", "flat", "ivf", "hnsw"] = _f(
        "auto", "the dense index: `auto` (exact `flat` up to `INDEX_APPROXIMATE_ABOVE` chunks, `ivf` above), `flat`, "
        "`ivf` (8-bit codes, memory-mapped, updated per changed document, re-scored exactly) or `hnsw` (rebuilt "
        "whole each build); takes effect at the next reindex")
    index_nprobe: int = _f(0, "IVF lists read per query (0: three in eight, at least 32); recorded at the next "
                           "reindex", ge=0)
    retrieval_top_k: int = _f(12, "chunks retrieved", ge=1, le=200)
    retrieval_rerank_k: int = _f(6, "chunks kept after reranking (at most `RETRIEVAL_TOP_K`)", ge=1)
    retrieval_backend: str = _f("local", "the search backend: `local` (FAISS + BM25 files beside the store), `lexical` "
                                "(words only, no encoder) or `atlas` (MongoDB `$vectorSearch` + `$search`; untested "
                                "against a live server)")
    retrieval_atlas_collection: str | None = _f(None, "the `atlas` backend's chunk collection (none: "
                                                "`<COLLECTION_PREFIX>chunks`)")
    retrieval_atlas_vector_index: str = _f("historian_vectors", "the `atlas` backend's vector search index")
    retrieval_atlas_search_index: str = _f("historian_text", "the `atlas` backend's Atlas Search index")
    retrieval_dense_weight: float = _f(0.7, "weight of the meaning (vector) ranking in the fusion", ge=0)
    retrieval_bm25_weight: float = _f(0.3, "weight of the word (BM25) ranking in the fusion", ge=0)
    verify_max_revision_attempts: int = _f(2, "revise loop limit", ge=0, le=10)
    verify_challenge_cap: float = _f(0.30, "the challenger's penalty cap", ge=0, le=1)
    verify_interrogation_cap: float = _f(0.20, "the interrogator's penalty cap", ge=0, le=1)
    verify_counter_cap: float = _f(0.25, "the counter-arguer's penalty cap", ge=0, le=1)
    verify_verified_threshold: float = _f(0.80, "confidence at or above which an answer may be `verified`", ge=0,
                                          le=1)
    verify_flagged_threshold: float = _f(0.60, "confidence at or above which it is `flagged` (else lower)", ge=0,
                                         le=1)
    verify_human_review_threshold: float = _f(0.40, "confidence under which it is `insufficient_evidence`", ge=0,
                                              le=1)
    reader: Literal["on", "off"] = _f("off", "`on`: the reader model ranks an answer's sentences and reads the claims "
                                      "the rules leave open (docs/verification.md, \"The reader\"; "
                                      "opt-in until it wins)")
    limits_max_question_chars: int = _f(2000, "longest question", ge=1)
    limits_max_draft_chars: int = _f(20000, "longest draft to verify", ge=1)
    limits_timeout_s: float = _f(60, "time limit of one run (ask, map, draft check), seconds: past it the run stops, "
                                     "ends `human_review` and is stored", gt=0)
    limits_max_running_per_user: int = _f(2, "asks, maps, draft checks and searches one user may have going at once "
                                              "(more: 429 with Retry-After)", ge=1, le=1000)
    limits_max_claims: int = _f(100, "most claims one draft check reads (more: 413 `too_many_claims`)",
                                ge=1, le=10000)
    limits_max_body_bytes: int = _f(1_000_000, "largest JSON body Historian reads (larger: 413 `too_large`)",
                                    ge=1024)
    security_headers: bool = _f(True, "add CSP, `X-Content-Type-Options`, `X-Frame-Options`, `Referrer-Policy` "
                                "and `Cross-Origin-Opener-Policy` to Historian's responses (the host's own kept)")
    security_csp: str | None = _f("auto", "`auto`: Historian's policy (report-only inside a host's layout); a "
                                  "policy string: that policy, enforced; none: no CSP header")
    llm_base_url: str | None = _f(None, "an OpenAI-compatible endpoint (none: OpenAI), e.g. "
                                  "`http://localhost:11434/v1`")
    llm_api_key: str | None = _f(None, "the key (secret; none: `OPENAI_API_KEY`); a local server needs none")
    llm_model: str = _f("gpt-4o-mini", "the model of every role without an override")
    llm_roles: dict[str, dict[str, Any]] = _f({}, "per role (`planner`, `composer`, `challenger`, `interrogator`, "
                                              "`counter_arguer`, `judge`, `refiner`, `mapper`): `model`, "
                                              "`temperature`, `max_tokens`, `timeout`, `base_url`, `api_key`")
    llm_timeout_s: float = _f(30.0, "per request, seconds (fractions allowed)", gt=0)
    llm_max_retries: int = _f(3, "retries on 429, 5xx, timeouts and dropped connections", ge=0, le=10)
    llm_backoff_s: float = _f(1.0, "first retry wait, doubled each time (or the server's `Retry-After`, at most "
                              "30 s)", ge=0)
    llm_cache_ttl_s: float = _f(86400, "model replies cached by (model, parameters, prompt), seconds; 0 disables",
                                ge=0)
    llm_structured_output: Literal["json_schema", "json_mode", "prompt"] = _f(
        "json_mode", "`json_schema` (`with_structured_output`), `json_mode` (`response_format: json_object`) or "
        "`prompt` (plain replies, parsed)")
    llm_context_tokens: int = _f(8000, "context budget of one call (evidence is cut first, never the rules)",
                                 ge=1000)
    llm_calibration_file: str | None = _f(None, "YAML list of `{claim, evidence, finding}` calibration examples "
                                          "for the challenger")
    map_max_rounds: int = _f(3, "counter-query rounds of the knowledge map", ge=0, le=3)
    map_top_k: int = _f(8, "chunks retrieved per map query", ge=1, le=200)
    map_per_document: int = _f(2, "passages of one document kept per map query", ge=1)
    map_max_sources: int = _f(16, "sources one map reads", ge=1, le=200)
    map_credibility_weights: dict[str, float] = _f({}, "weights of the judge's credibility factors over the "
                                                   "defaults (see the knowledge map docs)")
    map_document_types: dict[str, float] = _f({}, "value (0–1) of a document type over the defaults, matched "
                                              "against the document's `doc_type`")

    @field_validator("reader", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value

    @field_validator("url_prefix")
    @classmethod
    def _prefix(cls, value: str) -> str:
        if not value.startswith("/") or value == "/":
            raise ValueError("must start with '/' and not be the site root (the blueprint's static files need a "
                             "prefix)")
        return value

    @field_validator("fields")
    @classmethod
    def _fields(cls, value: dict[str, Any]) -> dict[str, Any]:
        unknown = set(value) - set(DEFAULT_FIELDS)
        if unknown:
            raise ValueError(f"unknown field(s) {sorted(unknown)}; known: {sorted(DEFAULT_FIELDS)}")
        for name in ("id", "title", "text"):
            if not isinstance(value.get(name, DEFAULT_FIELDS[name]), str) or not value.get(name, DEFAULT_FIELDS[name]):
                raise ValueError(f"the {name!r} field must be one field name")
        return value

    @field_validator("llm_roles")
    @classmethod
    def _roles(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for role, opts in value.items():
            if role not in ROLES:
                raise ValueError(f"unknown role {role!r}; roles: {', '.join(ROLES)}")
            unknown = set(opts or {}) - set(ROLE_OPTIONS)
            if unknown:
                raise ValueError(f"unknown option(s) {sorted(unknown)} for {role}; options: {', '.join(ROLE_OPTIONS)}")
        return value

    @model_validator(mode="after")
    def _together(self) -> Settings:
        def fail(key: str, why: str) -> None:
            raise ValueError(f"{PREFIX}{key.upper()}={getattr(self, key)!r}: {why}")

        if self.index_chunk_overlap >= self.index_chunk_size // 2:
            fail("index_chunk_overlap", "must be between 0 and half the chunk size")
        if self.retrieval_rerank_k > self.retrieval_top_k:
            fail("retrieval_rerank_k", "need 1 <= RERANK_K <= TOP_K")
        if not self.verify_human_review_threshold <= self.verify_flagged_threshold <= self.verify_verified_threshold:
            fail("verify_flagged_threshold", "need HUMAN_REVIEW <= FLAGGED <= VERIFIED thresholds")
        return self

    @classmethod
    def settings_customise_sources(
        cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource, dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The values ``resolve`` layered (profile, environment, options, app.config: each key replaced whole by the
        highest layer that sets it, never merged: a token revoked in app.config is gone); nothing else (no .env)."""
        return (init_settings,)

    def key(self, name: str) -> Any:
        """One setting by its full key (``"HISTORIAN_RETRIEVAL_TOP_K"``)."""
        return getattr(self, name.removeprefix(PREFIX).lower())

    def as_config(self) -> dict[str, Any]:
        """Every setting as ``HISTORIAN_*`` config keys (the mirror in ``app.config``)."""
        return {PREFIX + name.upper(): value for name, value in self.model_dump().items()}

    def with_profile(self, name: str | None) -> Settings:
        """These settings with a profile's values on top (a run that picks its own profile)."""
        if not name:
            return self
        values = {**profile_values("default"), **profile_values(name)}
        return self.model_copy(update={k.lower(): v for k, v in values.items()} | {"profile": name})


def profile_values(name: str) -> dict[str, Any]:
    """The flat ``KEY -> value`` mapping of the named YAML profile."""
    if name not in PROFILES:
        raise ConfigError(f"HISTORIAN_PROFILE={name!r} is not one of {', '.join(PROFILES)}")
    with open(resource_path("profiles", f"{name}.yaml"), encoding="utf-8") as fh:
        data = yaml.safe_load(fh) or {}
    flat: dict[str, Any] = {}
    for section, value in data.items():
        section_key = str(section).upper()
        if isinstance(value, Mapping) and section_key.lower() not in Settings.model_fields:
            flat.update({f"{section_key}_{str(k).upper()}": v for k, v in value.items()})
        else:
            flat[section_key] = value
    for key in flat:
        if key.lower() not in Settings.model_fields:
            raise ConfigError(f"unknown Historian setting {PREFIX}{key} in profile {name!r}")
    return flat


def _textual(info: FieldInfo) -> bool:
    """A field whose environment value is taken as written (not parsed as YAML: "on" stays "on")."""
    kinds = get_args(info.annotation) or (info.annotation,)
    return all(k is str or k is type(None) or isinstance(k, str) for k in kinds)


def _env_values(environ: Mapping[str, str]) -> dict[str, Any]:
    """The ``HISTORIAN_<KEY>`` variables, parsed as YAML except for text settings (an empty one is not set); an
    unknown one is an error."""
    values: dict[str, Any] = {}
    for name, raw in environ.items():
        if not name.startswith(PREFIX) or name.startswith(NON_CONFIG_ENV):
            continue
        field = name[len(PREFIX):].lower()
        info = Settings.model_fields.get(field)
        if info is None:
            raise ConfigError(f"unknown Historian setting in environment variable {name}")
        if raw == "":  # set but empty: not set
            continue
        if _textual(info):
            values[field] = raw
            continue
        try:
            values[field] = yaml.safe_load(raw)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{name}: cannot parse {raw!r}: {exc}") from exc
    return values


_PLAIN = {"int_type": "expected an integer", "int_parsing": "expected an integer",
          "bool_type": "expected true or false", "float_type": "expected a number",
          "dict_type": "expected a mapping", "string_type": "expected a string"}


def resolve(explicit: Mapping[str, Any], options: Mapping[str, Any], environ: Mapping[str, str]) -> Settings:
    """The settings from app.config's ``HISTORIAN_*`` keys, ``Historian(**options)`` and the environment (over the
    profile and the defaults); ``ConfigError`` names the first key that is unknown or wrong."""
    given: dict[str, Any] = {}
    for name, value in options.items():
        key = name.upper().removeprefix(PREFIX).lower()
        if key not in Settings.model_fields:
            raise ConfigError(f"unknown Historian option {name!r}")
        given[key] = value
    for name, value in explicit.items():
        if name.startswith(PREFIX):
            key = name[len(PREFIX):].lower()
            if key not in Settings.model_fields:
                raise ConfigError(f"unknown Historian setting {name} in app.config")
            given[key] = value
    env = _env_values(environ)
    profile = given.get("profile") or env.get("profile") or Settings.model_fields["profile"].default
    layered = {k.lower(): v for k, v in profile_values(profile).items()}
    values = {**layered, **env, **given}  # each key whole from its highest layer
    try:
        return Settings(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = str(first["loc"][0]) if first["loc"] else ""
        why = _PLAIN.get(first["type"], first["msg"].removeprefix("Value error, "))
        if not where:
            raise ConfigError(why) from None
        shown = redacted({PREFIX + where.upper(): first.get("input")}).get(PREFIX + where.upper(), first.get("input"))
        raise ConfigError(f"{PREFIX}{where.upper()}={shown!r}: {why}") from None


def redacted(config: Mapping[str, Any]) -> dict[str, Any]:
    """Return the effective Historian settings with every secret masked: by key name (``SECRET_KEYS`` and any
    name that says secret, at any depth) and by shape in every value (``historian_blueprint.redaction``)."""
    out: dict[str, Any] = {}
    for key in (name.upper() for name in Settings.model_fields):
        value = config.get(PREFIX + key)
        if key in SECRET_KEYS and value:
            value = "***" if not isinstance(value, dict) else {"***": f"{len(value)} entries"}
        else:
            value = redact_value(value, secret_name(key))
        out[PREFIX + key] = value
    return out


def table() -> str:
    """The configuration table of docs/configuration.md, from the fields."""
    rows = ["| key | default | meaning |", "| --- | --- | --- |"]
    for name, info in Settings.model_fields.items():
        default = info.default
        shown = "none" if default is None else f"`{default}`" if not isinstance(default, dict) else (
            "`{}`" if not default else "see below")
        rows.append(f"| `{PREFIX}{name.upper()}` | {shown} | {info.description} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__" and "--table" in sys.argv:
    print(table(), end="")
