"""Someone else's Django project hosting karani's apps: only what docs/embedding.md requires.

No KARANI_* settings, no CACHES, no SPECTACULAR_SETTINGS: every karani setting takes its
default. The test picks the URLconf (karani's two includes in either order) and whether the
optional API docs are installed through the environment.
"""

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = "host-project-test-key-not-secret-0123456789-abcdefghijklmnopqrstuvwxyz"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "testserver"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "memory",
    "qualify",
]
# The optional schema and docs, set up as docs/embedding.md says.
API_DOCS = os.environ.get("HOSTPROJECT_API_DOCS") == "1"
if API_DOCS:
    INSTALLED_APPS += ["drf_spectacular", "drf_spectacular_sidecar"]
    REST_FRAMEWORK = {"DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema"}

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = os.environ.get("HOSTPROJECT_URLCONF", "hostproject.urls")
WSGI_APPLICATION = "hostproject.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
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

# The test names a file in its own temporary directory.
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("HOSTPROJECT_DB", BASE_DIR / "host.sqlite3"),
        # karani's decisions take SQLite's write lock at each transaction's start (check W002).
        "OPTIONS": {"transaction_mode": "IMMEDIATE"},
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

STATIC_URL = "static/"
