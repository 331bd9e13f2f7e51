"""karani settings, read from the environment: a clone runs on SQLite under KARANI_DATA_DIR."""

import math
import os
import re
import warnings
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def _env(name: str, default: str = "") -> str:
    return os.environ.get(name, "").strip() or default


def _invalid(name: str, use: str) -> ImproperlyConfigured:
    return ImproperlyConfigured(f"{name}={os.environ.get(name, '')!r} is not valid; use {use}")


def _env_number(
    name: str, default: Any, *, low: float, high: float = math.inf, use: str = ""
) -> Any:
    """An int or float like ``default``, from ``low`` to ``high``."""
    raw = _env(name)
    try:
        value = type(default)(raw) if raw else default
    except ValueError:
        value = math.nan
    if not low <= value <= high:  # also false for nan
        if isinstance(default, int):
            raise _invalid(name, f"a whole number of at least {low}")
        raise _invalid(name, use or f"a number of seconds from {low:g} to {high:g}")
    return value


def _env_choice(name: str, default: str, choices: tuple[str, ...], use: str = "") -> str:
    """One of ``choices`` in any case, spelled as listed."""
    value = _env(name, default).lower()
    for choice in choices:
        if value == choice.lower():
            return choice
    raise _invalid(name, use or f"one of: {', '.join(choices)}")


_BOOLS = ("1", "true", "yes", "on", "0", "false", "no", "off")


def _env_bool(name: str, default: bool) -> bool:
    return _env_choice(name, str(default), _BOOLS, "true or false") in _BOOLS[:4]


def _env_text(name: str, default: str = "", *, pattern: str = "", use: str = "") -> str:
    value = _env(name, default)
    if pattern and not re.fullmatch(pattern, value):
        raise _invalid(name, use)
    return value


def _env_prefix(name: str) -> str:
    """Read as written, trailing space included: e5's "query: " is not "query:"."""
    value = os.environ.get(name, "")
    if len(value) > 200 or any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise _invalid(name, "at most 200 characters on one line, e.g. 'query: '")
    return value


def _env_list(name: str, default: str = "") -> list[str]:
    return [v.strip() for v in os.environ.get(name, default).split(",") if v.strip()]


# Resolved against the repository root, so `karani` reaches the same ledger from any directory.
DATA_DIR = Path(os.environ.get("KARANI_DATA_DIR") or BASE_DIR / "var").expanduser().resolve()
KARANI_DATA_DIR = DATA_DIR
# The secrets scanner's compiled rules (memory/scanner.py): compiled once, then loaded from here.
KARANI_SCANNER_CACHE_DIR = Path(
    os.environ.get("KARANI_SCANNER_CACHE_DIR") or DATA_DIR / "kingfisher-rules"
).expanduser()

KARANI_MEMORY = _env_choice("KARANI_MEMORY", "basic", ("off", "basic", "mem0"))

DEBUG = _env_bool("KARANI_DEBUG", False)
# Fine for the local single-user default; the prefix makes `check --deploy` flag it (W009).
LOCAL_SECRET_KEY = "django-insecure-karani-local-key-set-KARANI_SECRET_KEY-in-production"
SECRET_KEY = _env("KARANI_SECRET_KEY", LOCAL_SECRET_KEY)
# Tests add Django's "testserver" themselves (setup_test_environment); production never has it.
ALLOWED_HOSTS = _env_list("KARANI_ALLOWED_HOSTS", "localhost,127.0.0.1")
LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "[::1]", ".localhost"}
_public_hosts = [h for h in ALLOWED_HOSTS if h not in LOCAL_HOSTS]
if SECRET_KEY == LOCAL_SECRET_KEY and _public_hosts:
    # The default key is public: anyone could sign this site's session cookies.
    raise ImproperlyConfigured(
        f"KARANI_SECRET_KEY is not set but KARANI_ALLOWED_HOSTS serves {_public_hosts[0]!r}: "
        "set KARANI_SECRET_KEY to a long random value (docs/security.md)"
    )


# "proxy": TLS ends at a reverse proxy that sets X-Forwarded-Proto; "direct": the server's own.
KARANI_HTTPS = _env_choice("KARANI_HTTPS", "off", ("off", "proxy", "direct"))
if KARANI_HTTPS != "off":
    if KARANI_HTTPS == "proxy":
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = _env_number("KARANI_HSTS_SECONDS", 31_536_000, low=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = _env_bool("KARANI_HSTS_INCLUDE_SUBDOMAINS", True)
    # Preloading is a promise browsers keep for months: opt in only.
    SECURE_HSTS_PRELOAD = _env_bool("KARANI_HSTS_PRELOAD", False)
CSRF_TRUSTED_ORIGINS = _env_list("KARANI_CSRF_TRUSTED_ORIGINS")
for _origin in CSRF_TRUSTED_ORIGINS:
    if not re.fullmatch(r"https?://[^\s/]+", _origin):
        raise ImproperlyConfigured(
            f"KARANI_CSRF_TRUSTED_ORIGINS has {_origin!r}: use scheme://host[:port] values"
        )

INSTALLED_APPS = [
    # First, so its runserver (TCP_NODELAY: no 40 ms Nagle stall) wins over staticfiles'.
    "karani_site",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "memory",
    "qualify",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

# Server-side, so a leaked or default key cannot forge what the admin shows.
MESSAGE_STORAGE = "django.contrib.messages.storage.session.SessionStorage"

ROOT_URLCONF = "karani_site.urls"
WSGI_APPLICATION = "karani_site.wsgi.application"

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


# Read whatever the database: a typo fails at start-up, not when the ledger moves to Postgres.
KARANI_DB_PREPARE = _env_bool("KARANI_DB_PREPARE", True)


def _database() -> dict:
    url = _env("DATABASE_URL")
    if not url:
        DATA_DIR.mkdir(parents=True, exist_ok=True)
        url = f"sqlite:///{DATA_DIR / 'karani.sqlite3'}"
    try:
        config = dj_database_url.parse(url, conn_max_age=60, conn_health_checks=True)
    except Exception as exc:  # dj-database-url raises several types for a bad URL
        raise ImproperlyConfigured(f"DATABASE_URL is not a usable database URL: {exc}") from None
    if config["ENGINE"] == "django.db.backends.sqlite3":
        config["CONN_MAX_AGE"] = 0
        config["OPTIONS"] = {
            # WAL lets readers run beside one writer; IMMEDIATE takes the write lock at BEGIN
            # so two writers queue on busy_timeout instead of failing to upgrade a read lock.
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        }
    elif config["ENGINE"] == "django.db.backends.postgresql":
        options = config.setdefault("OPTIONS", {})
        options.setdefault("connect_timeout", 5)
        # Prepared statements skip re-planning karani's few repeated queries; transaction-mode
        # poolers (PgBouncer before 1.21) cannot carry them, hence KARANI_DB_PREPARE=off.
        options.setdefault("server_side_binding", True)
        if KARANI_DB_PREPARE:
            options.setdefault("prepare_threshold", 5)
    return config


DATABASES = {"default": _database()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

TIME_ZONE = "UTC"

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
# WhiteNoise finds the apps' static files itself: no collectstatic step, so no STATIC_ROOT.
WHITENOISE_USE_FINDERS = True
warnings.filterwarnings("ignore", message="No directory at: ")

# Failed admin logins per client address, counted in the shared cache for this many seconds.
KARANI_ADMIN_LOGIN_ATTEMPTS = _env_number("KARANI_ADMIN_LOGIN_ATTEMPTS", 10, low=1)
KARANI_ADMIN_LOGIN_WINDOW = _env_number("KARANI_ADMIN_LOGIN_WINDOW", 900, low=1)

LOG_LEVEL = _env_choice(
    "KARANI_LOG_LEVEL", "warning", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
)
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(levelname)s %(name)s: %(message)s"}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "loggers": {
        "karani": {"handlers": ["stderr"], "level": LOG_LEVEL},
        # Every 500's traceback on stderr, not only mailed to ADMINS as Django does by default.
        "django.request": {"handlers": ["stderr"], "level": "ERROR", "propagate": False},
    },
}

_RATE = r"(?i)off|[1-9][0-9]*/(s|sec|second|m|min|minute|h|hour|d|day)"


def _env_rate(name: str, default: str) -> str | None:
    """A DRF throttle rate such as ``600/min``; ``off`` disables that scope."""
    rate = _env_text(name, default, pattern=_RATE, use="N/second, N/minute, N/hour, N/day or off")
    return None if rate.lower() == "off" else rate.lower()


# memory.api's throttle scopes (memory.api.base reads these, not REST_FRAMEWORK's rates).
KARANI_API_RECALL_RATE = _env_rate("KARANI_API_RECALL_RATE", "600/min")
KARANI_API_WRITE_RATE = _env_rate("KARANI_API_WRITE_RATE", "120/min")

# memory.api's views set all of this on themselves (memory.api.base); the same defaults here
# serve any other DRF view the project adds.
REST_FRAMEWORK = {
    # Token first: its WWW-Authenticate challenge is what makes anonymous requests a 401.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["memory.api.parsers.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "memory.api.exceptions.handle",
    "DEFAULT_THROTTLE_CLASSES": ["rest_framework.throttling.ScopedRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "recall": KARANI_API_RECALL_RATE,
        "write": KARANI_API_WRITE_RATE,
    },
}
# In the ledger database (migration 0011), so every worker and host spends one throttle budget.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "karani_cache",
        # Past MAX_ENTRIES Django culls a third of the rows, throttle histories included.
        "OPTIONS": {"MAX_ENTRIES": 100_000},
    }
}
SPECTACULAR_SETTINGS = {
    "TITLE": "karani memory API",
    "DESCRIPTION": "Remember, recall, list, correct and forget facts in karani's ledger.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# How many facts qualify injects into a prompt; qualify caps this at 10 whatever is set.
KARANI_MEMORY_TOP_K = _env_number("KARANI_MEMORY_TOP_K", 5, low=1)
KARANI_CONTEXT_COMPANY_SHARE = _env_number(
    "KARANI_CONTEXT_COMPANY_SHARE", 0.4, low=0, high=1, use="a fraction from 0 to 1 (e.g. 0.4)"
)

# The share of postings qualify judges without memory (docs/qualify.md); 0 turns it off.
KARANI_MEMORY_HOLDOUT = _env_number(
    "KARANI_MEMORY_HOLDOUT", 0.0, low=0, high=0.5, use="a fraction from 0 to 0.5 (e.g. 0.1)"
)

# The OpenAI-compatible chat endpoint of qualify and mem0's extraction; unset means no LLM.
KARANI_LLM_BASE_URL = _env("KARANI_LLM_BASE_URL")
KARANI_LLM_MODEL = _env("KARANI_LLM_MODEL", "local-model")
KARANI_LLM_API_KEY = _env("KARANI_LLM_API_KEY")

# Per request; bounded so one hung endpoint cannot stall a batch indefinitely.
KARANI_LLM_TIMEOUT = _env_number("KARANI_LLM_TIMEOUT", 30.0, low=1, high=300)
# Sizes mem0's extraction prompt when the endpoint's /v1/models does not report its context.
KARANI_LLM_CONTEXT = _env_number("KARANI_LLM_CONTEXT", 4096, low=512)
# Off: mem0 mode indexes every fact as written, even with an LLM configured for qualify.
KARANI_MEMORY_EXTRACTION = _env_bool("KARANI_MEMORY_EXTRACTION", True)

# mem0 mode: index a new fact on a worker thread after the write returns (memory.background).
KARANI_INDEX_IN_BACKGROUND = _env_bool("KARANI_INDEX_IN_BACKGROUND", True)

# The semantic index's own database, never DATABASE_URL: the disposable index may stay local.
KARANI_VECTOR_DSN = _env("KARANI_VECTOR_DSN")
KARANI_VECTOR_COLLECTION = _env_text(
    "KARANI_VECTOR_COLLECTION",
    "karani_memories",
    pattern=r"[a-z_][a-z0-9_]{0,50}",
    use="lower-case letters, digits and _ (a PostgreSQL table name, at most 51 characters)",
)
# Empty: the bundled model; else a local model directory or an embeddings endpoint's URL.
KARANI_EMBEDDER = _env("KARANI_EMBEDDER")
KARANI_EMBEDDER_MODEL = _env("KARANI_EMBEDDER_MODEL")
KARANI_EMBEDDER_DIMS = _env_number("KARANI_EMBEDDER_DIMS", 384, low=1)


# Asymmetric embedders (docs/embedders.md): what a question and what a stored text are sent as.
KARANI_EMBEDDER_QUERY_PREFIX = _env_prefix("KARANI_EMBEDDER_QUERY_PREFIX")
KARANI_EMBEDDER_PASSAGE_PREFIX = _env_prefix("KARANI_EMBEDDER_PASSAGE_PREFIX")
# An endpoint's model name per side; unset: KARANI_EMBEDDER_MODEL for both.
KARANI_EMBEDDER_QUERY_MODEL = _env("KARANI_EMBEDDER_QUERY_MODEL")
KARANI_EMBEDDER_PASSAGE_MODEL = _env("KARANI_EMBEDDER_PASSAGE_MODEL")
for _side, _model in (
    ("KARANI_EMBEDDER_QUERY_MODEL", KARANI_EMBEDDER_QUERY_MODEL),
    ("KARANI_EMBEDDER_PASSAGE_MODEL", KARANI_EMBEDDER_PASSAGE_MODEL),
):
    if _model and not KARANI_EMBEDDER.startswith(("http://", "https://")):
        raise ImproperlyConfigured(
            f"{_side} names an endpoint's model, but KARANI_EMBEDDER is not an http(s) "
            "endpoint; a local model takes KARANI_EMBEDDER_QUERY_PREFIX / _PASSAGE_PREFIX"
        )
# torch intra-op threads for the local embedder; 0 = torch's default (all cores).
KARANI_EMBEDDER_THREADS = _env_number("KARANI_EMBEDDER_THREADS", 1, low=0)
# auto: bfloat16 where the CPU computes it natively, else float32.
KARANI_EMBEDDER_DTYPE = _env_choice(
    "KARANI_EMBEDDER_DTYPE", "auto", ("auto", "float32", "bfloat16"), "auto, float32 or bfloat16"
)
# A dead or hung vector store costs one timeout, then is skipped until the cool-down passes.
KARANI_VECTOR_TIMEOUT = _env_number("KARANI_VECTOR_TIMEOUT", 2.0, low=0.1, high=60)
KARANI_VECTOR_COOLDOWN = _env_number("KARANI_VECTOR_COOLDOWN", 30.0, low=0, high=3600)
