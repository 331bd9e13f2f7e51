"""Drop memory_tokens: the term bitmaps are the keyword index now.

The token table was written with every fact (about ten rows each, three indexes) and read
only to rebuild bitmaps, which now tokenise the facts' text instead. At a million facts it
held 2.7 GB. Nothing is lost: it was derived from the facts, which stay. Migrating back
recreates the table empty.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0007_live_seen_covering_index"),
    ]

    operations = [
        migrations.DeleteModel(
            name="MemoryToken",
        ),
    ]
