"""The one settings module. Everything that differs between machines comes from the environment
(see README "Configuration"); with nothing set you get the embedded default: SQLite, the
filesystem broker, in-process llama.cpp, MiniLM embeddings and the locally trained GLiNER."""

from __future__ import annotations

import os
from pathlib import Path

from core.env import (
    DEFAULT_EMBEDDINGS,
    DEFAULT_ENTITY_MODEL,
    DEFAULT_LLM,
    DEFAULT_MODEL_SERVER_URL,
    EMBEDDING_PROVIDERS,
    LLM_PROVIDERS,
    ConfigError,
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_str,
    parse_broker_url,
    parse_database_url,
    parse_http_url,
    parse_model_spec,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("BLOOM_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

# Models load from packages on disk, never from a hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# --- core -----------------------------------------------------------------------------------
DEBUG = env_bool("DEBUG", True)
_secret = env_str("SECRET_KEY", "")
if not _secret:
    if not DEBUG:
        raise ConfigError("SECRET_KEY must be set when DEBUG is off")
    # Development only: a key that is obviously not a secret. Production must set SECRET_KEY.
    _secret = "django-insecure-bloom-development-key-do-not-use-in-production"
SECRET_KEY = _secret
ALLOWED_HOSTS = [
    h.strip() for h in env_str("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver").split(",") if h.strip()
]
CSRF_TRUSTED_ORIGINS = [o.strip() for o in env_str("CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "corsheaders",
    "django_celery_beat",
    "core",
    "core.outbox",
    "core.identity",
    "bloom",
    "telemetry",
    "memory",
    "coaching",
    "coaching.research",
    "evaluation",
    "evaluation.review",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "corsheaders.middleware.CorsMiddleware",
    # The API error shape for responses DRF never sees (404/405/413/500, CSRF); inside CORS.
    "core.errors.ApiErrorShapeMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

# The admin's flash messages kept in the session, not in a signed cookie: the cookie storage built
# a cookie signer on every request, the API's included (3.6 % of a web worker's CPU per memory
# search in py-spy; memory/README.md "Hubness" round); the session is read only when a page shows
# or adds a message.
MESSAGE_STORAGE = "django.contrib.messages.storage.session.SessionStorage"
ROOT_URLCONF = "bloom.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]
WSGI_APPLICATION = "bloom.wsgi.application"
ASGI_APPLICATION = "bloom.asgi.application"

# --- database -------------------------------------------------------------------------------
DATABASE_URL = env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'bloom.sqlite3'}")
DATABASES = {"default": parse_database_url(DATABASE_URL, base_dir=BASE_DIR)}
# Concurrent test runs (several checkouts on one machine) can pick their own test database.
if env_str("BLOOM_TEST_DB_NAME", ""):  # the suite's database, so parallel runs on one server don't collide
    DATABASES["default"]["TEST"] = {"NAME": env_str("BLOOM_TEST_DB_NAME", "")}
DB_VENDOR = "postgresql" if "postgresql" in DATABASES["default"]["ENGINE"] else "sqlite"
if DB_VENDOR == "postgresql":
    # Django's advice for ASGI (the web server here is uvicorn): no persistent connections. Each
    # request thread otherwise keeps its own connection open and 32 concurrent clients exhaust
    # PostgreSQL's max_connections (measured by bench/bench_load.py). Seconds; 0 = per request.
    DATABASES["default"]["CONN_MAX_AGE"] = env_int("BLOOM_DB_CONN_MAX_AGE", 0, minimum=0)
    # A pool of open connections per process (Django's psycopg_pool support), at most
    # BLOOM_DB_POOL_MAX (default 40; 0 = a new connection per request); a request borrows one and
    # gives it back. A new connection per request cost a search ~15 ms over HTTP here (connect, and
    # a fresh backend's cold catalog caches): with the pool the search load bench served 1.6-2.1x
    # the searches/s. A chat turn holds its connection while it waits for the model, so the pool
    # must outnumber the concurrent turns of a process: at 40, 32 concurrent chat clients on one
    # web worker gave no pool wait and no more failed turns than without it (4 vs 7 client
    # timeouts, all the model's queue; memory/README.md "The HTTP path"). A turn beyond the pool
    # waits up to BLOOM_DB_POOL_TIMEOUT seconds for a connection.
    if pool_max := env_int("BLOOM_DB_POOL_MAX", 40, minimum=0):
        DATABASES["default"]["CONN_MAX_AGE"] = 0  # Django: a pool replaces persistent connections
        # core/pool_check.py's check instead of Django's round trip per checkout (CONN_HEALTH_CHECKS
        # would pass Django's; core.apps installs ours on the pool).
        DATABASES["default"]["CONN_HEALTH_CHECKS"] = False
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": 1, "max_size": pool_max,
            "timeout": env_int("BLOOM_DB_POOL_TIMEOUT", 30, minimum=1)}
# The memory search's statements run as prepared statements on pooled connections
# (core.statements); BLOOM_DB_PREPARED=0 for a PgBouncer in transaction mode without
# max_prepared_statements. Django connects with prepared statements off (threshold None), which
# psycopg applies even to an explicit prepare=True; a threshold lets core.statements prepare. The
# ORM's client-side-binding cursors never prepare, whatever the threshold.
BLOOM_DB_PREPARED = (DB_VENDOR == "postgresql" and env_bool("BLOOM_DB_PREPARED", True)
                     and "pool" in DATABASES["default"].get("OPTIONS", {}))
if BLOOM_DB_PREPARED:
    DATABASES["default"]["OPTIONS"]["prepare_threshold"] = 5  # psycopg's default
EMBEDDED = DB_VENDOR == "sqlite"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").is_dir() else []
LOGIN_URL = "/admin/login/"

# --- security (production values when DEBUG is off; `check --deploy` is clean then) ----------
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
CORS_ALLOWED_ORIGINS = [o.strip() for o in env_str("CORS_ALLOWED_ORIGINS", "").split(",") if o.strip()]
CORS_URLS_REGEX = r"^/api/.*$"
# Request bodies over this many bytes are refused (400, one error shape); see core.errors.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("BLOOM_MAX_BODY_BYTES", 2_621_440, minimum=1024)
# Chat messages longer than this are refused with a 400 naming the limit.
BLOOM_MAX_MESSAGE_CHARS = env_int("BLOOM_MAX_MESSAGE_CHARS", 4000, minimum=1)

# --- REST API -------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "core.schema.BloomAutoSchema",
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "core.identity.auth.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "EXCEPTION_HANDLER": "core.errors.api_exception_handler",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 50,
    # Per-client throttling (core.throttling): keyed by the ApiClient, not the IP address.
    "DEFAULT_THROTTLE_CLASSES": ["core.throttling.ClientRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"client": env_str("BLOOM_THROTTLE_RATE", "600/min")},
}
# Throttle counters live in the cache: set BLOOM_CACHE_URL=redis://… when several web processes
# serve the API (the default in-process cache counts per process).
if env_str("BLOOM_CACHE_URL", ""):
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                          "LOCATION": env_str("BLOOM_CACHE_URL", "")}}
SPECTACULAR_SETTINGS = {
    "TITLE": "Bloom API",
    "DESCRIPTION": "Learning coach with long-term learner memory.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Several models have a `status`: name each choice set after its model (stable client type names).
    "ENUM_NAME_OVERRIDES": {"MessageStatusEnum": "coaching.models.MessageStatus",
                            "SessionStatusEnum": "coaching.models.SessionStatus",
                            "ModelCallStatusEnum": "telemetry.models.ModelCall.Status",
                            "CheckInOutcomeEnum": "coaching.models.CheckInOutcome"},
    "COMPONENT_SPLIT_REQUEST": True,
    # Operation ids and tags without the version prefix (a generated client gets `learners_create`).
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    # The documented contract is JSON (the views also parse forms; clients should not rely on it).
    "PARSER_WHITELIST": ["rest_framework.parsers.JSONParser"],
}

# --- models ---------------------------------------------------------------------------------
BLOOM_MODEL_CACHE = Path(os.path.expanduser(env_str("BLOOM_MODEL_CACHE", "~/.cache/bloom")))
BLOOM_LLM = parse_model_spec("BLOOM_LLM", env_str("BLOOM_LLM", DEFAULT_LLM), LLM_PROVIDERS)
# A model per job (each "provider:model", any provider): background work may use a larger model than
# chat, and the judge may sit on another host (an openai: vLLM server). Unset (None): the job uses
# BLOOM_LLM, resolved at call time (core.llm.job_model), so one override of BLOOM_LLM moves them all.
# The reader's model (coaching.turn.reading.proposer) is asked only for messages its rules cannot settle.
BLOOM_EXTRACTION_LLM = parse_model_spec("BLOOM_EXTRACTION_LLM", env_str("BLOOM_EXTRACTION_LLM"), LLM_PROVIDERS) \
    if env_str("BLOOM_EXTRACTION_LLM") else None
BLOOM_SUMMARY_LLM = parse_model_spec("BLOOM_SUMMARY_LLM", env_str("BLOOM_SUMMARY_LLM"), LLM_PROVIDERS) \
    if env_str("BLOOM_SUMMARY_LLM") else None
BLOOM_JUDGE_LLM = parse_model_spec("BLOOM_JUDGE_LLM", env_str("BLOOM_JUDGE_LLM"), LLM_PROVIDERS) \
    if env_str("BLOOM_JUDGE_LLM") else None
BLOOM_READING_LLM = parse_model_spec("BLOOM_READING_LLM", env_str("BLOOM_READING_LLM"), LLM_PROVIDERS) \
    if env_str("BLOOM_READING_LLM") else None
BLOOM_EMBEDDINGS = parse_model_spec(
    "BLOOM_EMBEDDINGS", env_str("BLOOM_EMBEDDINGS", DEFAULT_EMBEDDINGS), EMBEDDING_PROVIDERS
)
# Search queries' vectors: "int8", MiniLM's int8 query graph when `bloom_models` built and checked
# it (core/llm/providers/minilm_onnx.py), else the exact graph; "exact" always the exact graph.
# Stored vectors always come from the exact graph.
BLOOM_QUERY_EMBEDDINGS = env_choice("BLOOM_QUERY_EMBEDDINGS", "int8", ("int8", "exact"))
BLOOM_ENTITY_MODEL = env_str("BLOOM_ENTITY_MODEL", DEFAULT_ENTITY_MODEL)
OLLAMA_HOST = env_str("OLLAMA_HOST", "http://127.0.0.1:11434")
# OpenAI-compatible model server for `openai:` models. The default is the embedded one that
# `make run` starts (`manage.py model_server`, listening on this URL's host and port).
OPENAI_BASE_URL = parse_http_url("OPENAI_BASE_URL", env_str("OPENAI_BASE_URL", DEFAULT_MODEL_SERVER_URL))
OPENAI_API_KEY = env_str("OPENAI_API_KEY", "")
# /healthz's llm part: without a successful generation in this process for this long, it probes
# the model with a four-token generation (a model that loads but cannot generate is not healthy).
BLOOM_LLM_HEALTH_PROBE_AGE = env_float("BLOOM_LLM_HEALTH_PROBE_AGE", 300.0)
# torch threads (MiniLM, GLiNER) in web and worker processes: the cores belong to the model
# server. Set here, before anything imports torch, so every process gets the same bound.
BLOOM_TORCH_THREADS = env_int("BLOOM_TORCH_THREADS", 1, minimum=1)
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, str(BLOOM_TORCH_THREADS))
BLOOM_LLM_TIMEOUT = env_float("BLOOM_LLM_TIMEOUT", 120.0)
# How long a request may wait for the model (llama.cpp serves one request at a time) before it is
# answered 503 + Retry-After; separate from BLOOM_LLM_TIMEOUT, which bounds generation only.
BLOOM_LLM_QUEUE_TIMEOUT = env_float("BLOOM_LLM_QUEUE_TIMEOUT", 180.0)
BLOOM_LLM_RETRIES = env_int("BLOOM_LLM_RETRIES", 2, minimum=0)
BLOOM_LLM_CONTEXT = env_int("BLOOM_LLM_CONTEXT", 4096, minimum=512)
# llama.cpp threads of the model server (or of in-process llama.cpp). One process owns the cores:
# two llama.cpp instances spinning on shared cores decode ~5x slower (docs/model-runtime.md).
BLOOM_LLM_THREADS = env_int("BLOOM_LLM_THREADS", max(1, (os.cpu_count() or 2)), minimum=1)
BLOOM_LLM_BACKOFF = env_float("BLOOM_LLM_BACKOFF", 0.5)
BLOOM_LLM_BACKOFF_MAX = env_float("BLOOM_LLM_BACKOFF_MAX", 8.0)
# Circuit breaker: after this many consecutive transient failures, fail fast for the cool-down.
BLOOM_LLM_BREAKER_THRESHOLD = env_int("BLOOM_LLM_BREAKER_THRESHOLD", 5, minimum=1)
BLOOM_LLM_BREAKER_COOLDOWN = env_float("BLOOM_LLM_BREAKER_COOLDOWN", 30.0)
# Background model calls (memory extraction, summaries) step aside while a learner waits for a
# reply (core.llm.priority): checked every POLL seconds, for at most MAX_WAIT seconds per call.
# Turn it off for a worker with its own hardware and its own model server.
BLOOM_LLM_YIELD = env_bool("BLOOM_LLM_YIELD", True)
BLOOM_LLM_YIELD_POLL = env_float("BLOOM_LLM_YIELD_POLL", 0.1)
BLOOM_LLM_YIELD_MAX_WAIT = env_float("BLOOM_LLM_YIELD_MAX_WAIT", 300.0)
OLLAMA_KEEP_ALIVE = env_str("OLLAMA_KEEP_ALIVE", "5m")
EMBEDDING_DIM = 384
# Store prompt/response text in telemetry rows: on in the embedded demo, off in production.
BLOOM_TELEMETRY_CONTENT = env_bool("BLOOM_TELEMETRY_CONTENT", EMBEDDED)
BLOOM_TELEMETRY_CONTENT_MAX = env_int("BLOOM_TELEMETRY_CONTENT_MAX", 4000, minimum=0)
# Buffered recording: rows are written by a background thread (~µs on the call path instead of a
# DB round trip); a crash can lose the rows still queued. Off by default.
BLOOM_TELEMETRY_ASYNC = env_bool("BLOOM_TELEMETRY_ASYNC", False)
# The coach's read-only tool loop (coaching.turn.tool_loop). Off by default: with the 0.5B default
# model every loop step costs a JSON-constrained call (seconds on 2 cores) for little gain, and
# code already performs the actions. Turn on for larger models.
BLOOM_COACH_TOOL_LOOP = env_bool("BLOOM_COACH_TOOL_LOOP", False)
# Off by default: measured on the full evaluation set, the 0.5B model's one-sentence onboarding
# acknowledgements were mostly wrong ("I'm glad you're feeling scared.") and drove the guard;
# the gate's code-written confirmation carries the turn on its own (docs/coach-quality.md).
BLOOM_ONBOARDING_MODEL_ACK = env_bool("BLOOM_ONBOARDING_MODEL_ACK", False)
# The coach's replies are decoded under a plain-text grammar (core/llm/grammars.py: one paragraph,
# no markdown marks) where the provider takes one. 0 for an OpenAI-compatible server that rejects
# llama.cpp's `grammar` field.
BLOOM_PLAIN_REPLY_GRAMMAR = env_bool("BLOOM_PLAIN_REPLY_GRAMMAR", True)

# --- celery ---------------------------------------------------------------------------------
BROKER_DIR = VAR_DIR / "broker"
CELERY_BROKER_URL = parse_broker_url(env_str("CELERY_BROKER_URL", "filesystem://"))
if CELERY_BROKER_URL.startswith("filesystem://"):
    for sub in ("in", "processed", "control"):
        (BROKER_DIR / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "in"),
        "data_folder_out": str(BROKER_DIR / "in"),
        "processed_folder": str(BROKER_DIR / "processed"),
        # Broadcast (remote control) exchanges; kombu's default is a `control/` folder in the CWD.
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
else:
    # Seconds before a message taken by a worker that died without acking it is delivered again
    # (redis transport). Must exceed the longest task; tests shorten it to see redelivery.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("BLOOM_BROKER_VISIBILITY_TIMEOUT", 3600,
                                                                     minimum=1)}
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
# CPU priority of Celery workers (os.nice increment): background work yields the CPU to the web
# process answering a learner. 0 = unchanged.
BLOOM_WORKER_NICE = env_int("BLOOM_WORKER_NICE", 19, minimum=0)

# --- memory ---------------------------------------------------------------------------------
# Background fact extraction after each coach turn (off: memory is read, never written by turns).
BLOOM_MEMORY_EXTRACTION = env_bool("BLOOM_MEMORY_EXTRACTION", True)
BLOOM_SUMMARY_THRESHOLD = env_int("BLOOM_SUMMARY_THRESHOLD", 5, minimum=1)
BLOOM_ARCHIVE_AFTER_DAYS = env_int("BLOOM_ARCHIVE_AFTER_DAYS", 30, minimum=1)
# Ingest: cosine at which a new fact strengthens an older one / may be flagged as a surprise.
BLOOM_MEMORY_DEDUP_COSINE = env_float("BLOOM_MEMORY_DEDUP_COSINE", 0.90)
BLOOM_MEMORY_SURPRISE_COSINE = env_float("BLOOM_MEMORY_SURPRISE_COSINE", 0.75)
# Search access marks are written behind every this many seconds (0: in the search itself).
BLOOM_MEMORY_ACCESS_FLUSH_SECONDS = env_float("BLOOM_MEMORY_ACCESS_FLUSH_SECONDS", 1.0)
# Tiers on the decay score: hot at or above HOT_MIN, warm at or above WARM_MIN, cold below.
BLOOM_MEMORY_TIER_HOT_MIN = env_float("BLOOM_MEMORY_TIER_HOT_MIN", 0.7)
BLOOM_MEMORY_TIER_WARM_MIN = env_float("BLOOM_MEMORY_TIER_WARM_MIN", 0.4)
for _name, _value in (("BLOOM_MEMORY_DEDUP_COSINE", BLOOM_MEMORY_DEDUP_COSINE),
                      ("BLOOM_MEMORY_SURPRISE_COSINE", BLOOM_MEMORY_SURPRISE_COSINE),
                      ("BLOOM_MEMORY_TIER_HOT_MIN", BLOOM_MEMORY_TIER_HOT_MIN),
                      ("BLOOM_MEMORY_TIER_WARM_MIN", BLOOM_MEMORY_TIER_WARM_MIN)):
    if not 0 < _value <= 1:
        raise ConfigError(f"{_name}={_value} must be > 0 and <= 1")
if BLOOM_MEMORY_ACCESS_FLUSH_SECONDS < 0:
    raise ConfigError(f"BLOOM_MEMORY_ACCESS_FLUSH_SECONDS={BLOOM_MEMORY_ACCESS_FLUSH_SECONDS} must be >= 0")
if BLOOM_MEMORY_TIER_WARM_MIN > BLOOM_MEMORY_TIER_HOT_MIN:
    raise ConfigError(f"BLOOM_MEMORY_TIER_WARM_MIN={BLOOM_MEMORY_TIER_WARM_MIN} must be <= "
                      f"BLOOM_MEMORY_TIER_HOT_MIN={BLOOM_MEMORY_TIER_HOT_MIN}")
# Read path (context block): at most this many facts, none older than this many days.
BLOOM_CONTEXT_MAX_FACTS = env_int("BLOOM_CONTEXT_MAX_FACTS", 12, minimum=1)
BLOOM_CONTEXT_MAX_DAYS = env_int("BLOOM_CONTEXT_MAX_DAYS", 90, minimum=1)
# pgvector HNSW ef_search for the staff-wide (all learners) search.
BLOOM_HNSW_EF_SEARCH = env_int("BLOOM_HNSW_EF_SEARCH", 100, minimum=1)
# GLiNER labels (comma-separated; empty: the entity model's own) and span threshold (empty: the
# one stored with the model).
BLOOM_ENTITY_LABELS = [x.strip() for x in env_str("BLOOM_ENTITY_LABELS", "").split(",") if x.strip()]
BLOOM_ENTITY_THRESHOLD = (env_float("BLOOM_ENTITY_THRESHOLD", 0.0) if env_str("BLOOM_ENTITY_THRESHOLD", "")
                          else None)
if BLOOM_ENTITY_THRESHOLD is not None and not 0 <= BLOOM_ENTITY_THRESHOLD <= 1:
    raise ConfigError(f"BLOOM_ENTITY_THRESHOLD={BLOOM_ENTITY_THRESHOLD} must be between 0 and 1")
# The API token `manage.py mcp_memory --client-token` serves the client of (set in the MCP
# client's `env`, not on the command line, where every user of the machine could read it).
BLOOM_API_TOKEN = env_str("BLOOM_API_TOKEN", "").strip()
# Retention: learner/coach message text older than this many days is blanked by the periodic
# task bloom.retention (rows and counts stay). 0 keeps message text forever.
BLOOM_MESSAGE_RETENTION_DAYS = env_int("BLOOM_MESSAGE_RETENTION_DAYS", 0, minimum=0)
# Research (coaching.research.conf): a planned session is missed once its start + duration + this
# grace has passed unreported; a calendar event without Bloom's UID matches a session starting
# within ± the match window; a check-in reminder is due from the learner's best time until the
# reminder window has passed (keep it longer than the 15-minute beat); reminders are in-app
# messages, also posted to the hook when it is an http(s) URL (`none`: in-app only).
BLOOM_MISSED_GRACE_MINUTES = env_int("BLOOM_MISSED_GRACE_MINUTES", 120, minimum=0)
BLOOM_REMINDER_WINDOW_MINUTES = env_int("BLOOM_REMINDER_WINDOW_MINUTES", 120, minimum=1)
BLOOM_REMINDER_HOOK = env_str("BLOOM_REMINDER_HOOK", "none")
if BLOOM_REMINDER_HOOK != "none":
    parse_http_url("BLOOM_REMINDER_HOOK", BLOOM_REMINDER_HOOK)  # `none` or an http(s) URL, else stop here
# `manage.py seed_demo`: the demo staff user's password (empty: a random one on first run, then kept).
BLOOM_DEMO_PASSWORD = env_str("BLOOM_DEMO_PASSWORD", "")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"httpx": {"level": "WARNING"}, "httpx2": {"level": "WARNING"}, "httpcore": {"level": "WARNING"},
                "openai": {"level": "WARNING"}},
}
