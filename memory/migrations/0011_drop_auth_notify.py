"""Drop the NOTIFY triggers on the token and user tables; create the shared cache table.

The API authenticates with stock DRF ``TokenAuthentication`` now, so nothing listens for
karani_auth any more. The cache table backs throttling (``CACHES`` in settings): every worker
and host shares the counts, so a documented rate is the real rate.
"""

from django.conf import settings
from django.core.management import call_command
from django.db import migrations

CACHE_TABLE = "karani_cache"


def _auth_tables(apps) -> list[str]:
    user = apps.get_model(settings.AUTH_USER_MODEL)
    token = apps.get_model("authtoken", "Token")
    return [token._meta.db_table, user._meta.db_table]


def drop_triggers(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    qn = schema_editor.quote_name
    for table in _auth_tables(apps):
        schema_editor.execute(f"DROP TRIGGER IF EXISTS karani_auth_changed ON {qn(table)}")
    schema_editor.execute("DROP FUNCTION IF EXISTS karani_auth_changed()")


def create_cache_table(apps, schema_editor):
    # createcachetable reads CACHES; name the table explicitly so a test or deployment with
    # another cache backend still gets the table this migration promises.
    call_command("createcachetable", CACHE_TABLE, database=schema_editor.connection.alias)


def drop_cache_table(apps, schema_editor):
    schema_editor.execute(f"DROP TABLE IF EXISTS {schema_editor.quote_name(CACHE_TABLE)}")


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0010_auth_change_notify"),
        ("authtoken", "0004_alter_tokenproxy_options"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(drop_triggers, migrations.RunPython.noop),
        migrations.RunPython(create_cache_table, drop_cache_table),
    ]
