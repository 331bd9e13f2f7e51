"""karani settings, read from the environment: a clone runs on SQLite under KARANI_DATA_DIR."""

import os
import re
import warnings
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from memory import conf as memory_conf
from memory.appsettings import Setting, choice, from_environment, listing, switch, text, whole
from qualify import conf as qualify_conf

BASE_DIR = Path(__file__).resolve().parent.parent

LOCAL_SECRET_KEY = "django-insecure-karani-local-key-set-KARANI_SECRET_KEY-in-production"

# The site's own settings, read from the environment beside the apps' (memory.conf,
# qualify.conf); README's configuration table lists them all.
SITE_SETTINGS = (
    Setting("KARANI_DEBUG", False, switch()),  # Django's DEBUG
    # Fine for the local single-user default; the prefix makes `check --deploy` flag it (W009).
    Setting("KARANI_SECRET_KEY", LOCAL_SECRET_KEY, text()),
    Setting("KARANI_ALLOWED_HOSTS", ["localhost", "127.0.0.1"], listing()),
    # "proxy": TLS ends at a reverse proxy that sets X-Forwarded-Proto; "direct": the server's.
    Setting("KARANI_HTTPS", "off", choice("off", "proxy", "direct")),
    Setting("KARANI_HSTS_SECONDS", 31_536_000, whole(0)),
    Setting("KARANI_HSTS_INCLUDE_SUBDOMAINS", True, switch()),
    # Preloading is a promise browsers keep for months: opt in only.
    Setting("KARANI_HSTS_PRELOAD", False, switch()),
    Setting("KARANI_CSRF_TRUSTED_ORIGINS", [], listing()),
    # Read whatever the database: a typo fails at start-up, not when the ledger moves to
    # Postgres.
    Setting("KARANI_DB_PREPARE", True, switch()),
    Setting("KARANI_LOG_LEVEL", "WARNING", choice("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")),
)

# Every KARANI_* value, as memory's and qualify's settings objects read them (memory.conf).
_APP_SETTINGS = from_environment(
    (*memory_conf.SETTINGS, *qualify_conf.SETTINGS),
    # Resolved against the repository root, so `karani` reaches the same ledger from any
    # directory.
    defaults={"KARANI_DATA_DIR": BASE_DIR / "var"},
)
globals().update(_APP_SETTINGS)
_SITE = from_environment(SITE_SETTINGS)

DATA_DIR = _APP_SETTINGS["KARANI_DATA_DIR"]

DEBUG = _SITE["KARANI_DEBUG"]
SECRET_KEY = _SITE["KARANI_SECRET_KEY"]
# Tests add Django's "testserver" themselves (setup_test_environment); production never has it.
ALLOWED_HOSTS = _SITE["KARANI_ALLOWED_HOSTS"]
LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "[::1]", ".localhost"}
_public_hosts = [h for h in ALLOWED_HOSTS if h not in LOCAL_HOSTS]
if SECRET_KEY == LOCAL_SECRET_KEY and _public_hosts:
    # The default key is public: anyone could sign this site's session cookies.
    raise ImproperlyConfigured(
        f"KARANI_SECRET_KEY is not set but KARANI_ALLOWED_HOSTS serves {_public_hosts[0]!r}: "
        "set KARANI_SECRET_KEY to a long random value (docs/security.md)"
    )


KARANI_HTTPS = _SITE["KARANI_HTTPS"]
if KARANI_HTTPS != "off":
    if KARANI_HTTPS == "proxy":
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = _SITE["KARANI_HSTS_SECONDS"]
    SECURE_HSTS_INCLUDE_SUBDOMAINS = _SITE["KARANI_HSTS_INCLUDE_SUBDOMAINS"]
    SECURE_HSTS_PRELOAD = _SITE["KARANI_HSTS_PRELOAD"]
CSRF_TRUSTED_ORIGINS = _SITE["KARANI_CSRF_TRUSTED_ORIGINS"]
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


KARANI_DB_PREPARE = _SITE["KARANI_DB_PREPARE"]


def _database() -> dict:
    url = os.environ.get("DATABASE_URL", "").strip()
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

LOG_LEVEL = _SITE["KARANI_LOG_LEVEL"]
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
        "recall": _APP_SETTINGS["KARANI_API_RECALL_RATE"],
        "write": _APP_SETTINGS["KARANI_API_WRITE_RATE"],
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

# An endpoint's model name per side needs an endpoint: a local model takes the prefixes instead.
_EMBEDDER = _APP_SETTINGS["KARANI_EMBEDDER"]
for _side in ("KARANI_EMBEDDER_QUERY_MODEL", "KARANI_EMBEDDER_PASSAGE_MODEL"):
    if _APP_SETTINGS[_side] and not _EMBEDDER.startswith(("http://", "https://")):
        raise ImproperlyConfigured(
            f"{_side} names an endpoint's model, but KARANI_EMBEDDER is not an http(s) "
            "endpoint; a local model takes KARANI_EMBEDDER_QUERY_PREFIX / _PASSAGE_PREFIX"
        )
