"""Drop memory_tokens: the term bitmaps are the keyword index now.

The token table was written with every fact (about ten rows each, three indexes) and read
only to rebuild bitmaps, which now tokenise the facts' text instead. At a million facts it
held 2.7 GB. Nothing is lost: it was derived from the facts, which stay. Migrating back
refills it from the facts, for the code that still reads it.
"""

from django.db import migrations

_CHUNK = 2000


def refill_tokens(apps, schema_editor):
    from memory import text

    memory_model = apps.get_model("memory", "Memory")
    token_model = apps.get_model("memory", "MemoryToken")
    live = memory_model._base_manager.filter(deleted_at__isnull=True).order_by("id")
    last = 0
    while rows := list(live.filter(id__gt=last).values_list("id", "text", "company_key")[:_CHUNK]):
        token_model._base_manager.bulk_create(
            [
                token_model(memory_id=pk, token=token, company_key=key)
                for pk, body, key in rows
                for token in text.tokens(body)
            ],
            batch_size=5000,
        )
        last = rows[-1][0]


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0007_live_seen_covering_index"),
    ]

    operations = [
        # Reversed in the opposite order: the table comes back, then its rows.
        migrations.RunPython(migrations.RunPython.noop, refill_tokens),
        migrations.DeleteModel(
            name="MemoryToken",
        ),
    ]
