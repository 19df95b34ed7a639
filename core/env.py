"""Environment configuration for Bloom.

Every knob is an environment variable; this module parses them once and raises
`ConfigError` with a single line naming the offending variable. `manage.py` and the ASGI
entry point print that line and exit instead of a traceback.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from django.core.exceptions import ImproperlyConfigured

LLM_PROVIDERS = ("openai", "llamacpp", "ollama", "fake")
EMBEDDING_PROVIDERS = ("minilm", "ollama", "fake")
# The default chat model is served by the embedded model server (`manage.py model_server`, its own
# process) over the OpenAI protocol; the same provider reaches vLLM, llama-server or Ollama's /v1.
# It is the 1.5B because the model-swap evaluation's rule picked it (docs/coach-quality.md).
DEFAULT_LLM = "openai:qwen2.5-coder-1.5b-instruct-q4"
# With that default, the reader's proposals stay on the 0.5B beside it: a reading is on the path of
# every reply it is asked for, and the evaluation that chose the 1.5B read with the 0.5B.
DEFAULT_READING_LLM = "openai:qwen2.5-coder-0.5b-instruct-q4"
DEFAULT_MODEL_SERVER_URL = "http://127.0.0.1:8081/v1"
DEFAULT_EMBEDDINGS = "minilm:all-MiniLM-L6-v2"
DEFAULT_ENTITY_MODEL = "local"


class ConfigError(ImproperlyConfigured):
    """A configuration value is missing or malformed. `str(err)` is one line naming the variable."""


@dataclass(frozen=True)
class ModelSpec:
    provider: str
    model: str


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip() or default


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no, on/off)")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise ConfigError(f"{name}={value} must be >= {minimum}")
    return value


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    value = env_str(name, default).lower()
    if value not in choices:
        raise ConfigError(f"{name}={value!r} is not one of {', '.join(choices)}")
    return value


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a number") from None


def parse_model_spec(name: str, raw: str, providers: tuple[str, ...]) -> ModelSpec:
    """`provider:model` (the model part may itself contain colons, e.g. `ollama:llama3.2:3b`)."""
    provider, sep, model = raw.partition(":")
    provider = provider.strip().lower()
    if provider not in providers:
        raise ConfigError(f"{name}={raw!r}: unknown provider {provider!r} (expected one of: {', '.join(providers)})")
    if not sep or not model.strip():
        raise ConfigError(f"{name}={raw!r}: missing model name (expected '{provider}:<model>')")
    return ModelSpec(provider=provider, model=model.strip())


def parse_database_url(raw: str, *, base_dir: Path) -> dict:
    """Parse DATABASE_URL into a Django DATABASES entry; only sqlite and postgres are supported."""
    import dj_database_url

    parsed = urlparse(raw)
    if parsed.scheme in ("postgres", "postgresql", "pgsql"):
        if not parsed.hostname and not parsed.path.strip("/"):
            raise ConfigError(f"DATABASE_URL={raw!r} is malformed: expected postgres://user@host:port/dbname")
        if not parsed.path.strip("/"):
            raise ConfigError(f"DATABASE_URL={raw!r} is malformed: no database name")
        try:
            _ = parsed.port
        except ValueError:
            raise ConfigError(f"DATABASE_URL={raw!r} is malformed: bad port") from None
    elif parsed.scheme == "sqlite":
        pass
    else:
        raise ConfigError(
            f"DATABASE_URL={raw!r} is malformed or unsupported: use postgres://user@host:port/db or sqlite:///path"
        )
    try:
        config = dj_database_url.parse(raw, conn_max_age=60, conn_health_checks=True)
    except Exception as exc:  # dj-database-url raises a variety of errors
        raise ConfigError(f"DATABASE_URL={raw!r} is malformed: {exc}") from None
    if config["ENGINE"] == "django.db.backends.sqlite3":
        name = config.get("NAME") or ""
        if name and name != ":memory:" and not os.path.isabs(name):
            config["NAME"] = str(base_dir / name)
        config["CONN_MAX_AGE"] = 0
        # SQLite under a web server, a worker and beat: wait for locks instead of failing at once.
        config["OPTIONS"] = {"timeout": 30, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"}
    return config


def parse_http_url(name: str, raw: str) -> str:
    parsed = urlparse(raw)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise ConfigError(f"{name}={raw!r} is not an http(s) URL (e.g. http://127.0.0.1:8081/v1)")
    try:
        _ = parsed.port
    except ValueError:
        raise ConfigError(f"{name}={raw!r} has a bad port") from None
    return raw.rstrip("/")


def parse_broker_url(raw: str) -> str:
    scheme = urlparse(raw).scheme
    if scheme not in ("redis", "rediss", "filesystem", "memory", "amqp"):
        raise ConfigError(f"CELERY_BROKER_URL={raw!r}: unsupported broker (use redis://host:port/db or filesystem://)")
    return raw
