"""Once re-encoded the term bitmaps and created karani_bits_set() (both gone in 0012).

Now a no-op: the bitmaps it re-encoded are dropped by 0012, which also drops the function
if an older ledger has it. It used to import live project code, which a migration must not.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0005_keep_job_search_words"),
    ]

    operations = []
