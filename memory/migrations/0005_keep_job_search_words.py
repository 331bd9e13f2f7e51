"""Index the words memory.text.KEPT_WORDS stopped treating as stopwords.

Adds the missing postings for every live fact, then rebuilds the term bitmaps from them.
Both tables are derived from the facts; no fact row is touched.
"""

from django.db import migrations

_CHUNK = 2000


def index_kept_words(apps, schema_editor):
    from memory import bitmaps, text

    memory_model = apps.get_model("memory", "Memory")
    token_model = apps.get_model("memory", "MemoryToken")
    bitmap_model = apps.get_model("memory", "TermBitmap")
    # Historical models carry no custom managers: use the base one, with an explicit filter.
    live = memory_model._base_manager.filter(deleted_at__isnull=True).order_by("id")
    last = 0
    while True:
        rows = list(live.filter(id__gt=last).values_list("id", "text", "company_key")[:_CHUNK])
        if not rows:
            break
        token_model._base_manager.bulk_create(
            [
                token_model(memory_id=pk, token=token, company_key=key)
                for pk, body, key in rows
                for token in text.tokens(body)
            ],
            ignore_conflicts=True,
            batch_size=5000,
        )
        last = rows[-1][0]
    # Bitmaps are a derived index: clear and rebuild them from the postings.
    bitmap_model._base_manager.all().delete()
    bitmaps.rebuild(model=bitmap_model)


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0004_term_bitmaps"),
    ]

    operations = [
        migrations.RunPython(index_kept_words, migrations.RunPython.noop, elidable=True),
    ]
