"""NOTIFY karani_auth when API tokens or users change: the signal memory/api/token_cache.py
waits for before it trusts a cached token row.

Statement-level AFTER triggers on UPDATE, DELETE and TRUNCATE of the token table and the user
table (whichever AUTH_USER_MODEL names). Inserts need none: a new token is not in any cache
yet. Any change to a user counts (is_active, the username the API records as the actor,
anything ``from_db`` builds the user from), since the cache holds the user's whole row. The
notification is sent when the changing transaction commits, never for one rolled back.

SQLite has no NOTIFY and no such cache: nothing is created there.
"""

from django.conf import settings
from django.db import migrations

FUNCTION = """
CREATE OR REPLACE FUNCTION karani_auth_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('karani_auth', TG_TABLE_NAME);
    RETURN NULL;
END
$$
"""


def _tables(apps) -> list[str]:
    user = apps.get_model(settings.AUTH_USER_MODEL)
    token = apps.get_model("authtoken", "Token")
    return [token._meta.db_table, user._meta.db_table]


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    qn = schema_editor.quote_name
    schema_editor.execute(FUNCTION, params=None)
    for table in _tables(apps):
        schema_editor.execute(
            f"CREATE TRIGGER karani_auth_changed AFTER UPDATE OR DELETE OR TRUNCATE ON {qn(table)}"
            " FOR EACH STATEMENT EXECUTE FUNCTION karani_auth_changed()"
        )


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    qn = schema_editor.quote_name
    for table in _tables(apps):
        schema_editor.execute(f"DROP TRIGGER IF EXISTS karani_auth_changed ON {qn(table)}")
    schema_editor.execute("DROP FUNCTION IF EXISTS karani_auth_changed()")


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0009_remember_function"),
        ("authtoken", "0004_alter_tokenproxy_options"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(create, drop),
    ]
