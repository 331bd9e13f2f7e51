"""`manage.py check` warns a host project whose SQLite database begins transactions deferred:
decisions rely on the write lock being taken at the start (docs/decisions.md)."""

from django.core.management import call_command

from qualify.checks import deferred_sqlite

SQLITE = "django.db.backends.sqlite3"


def test_it_names_each_sqlite_database_without_immediate_transactions():
    databases = {
        "default": {"ENGINE": SQLITE, "OPTIONS": {"transaction_mode": "IMMEDIATE"}},
        "plain": {"ENGINE": SQLITE},
        "deferred": {"ENGINE": SQLITE, "OPTIONS": {"transaction_mode": "DEFERRED"}},
        "pg": {"ENGINE": "django.db.backends.postgresql"},
    }

    assert deferred_sqlite(databases) == ["plain", "deferred"]


def test_karanis_own_settings_pass_the_check():
    call_command("check", fail_level="WARNING")
