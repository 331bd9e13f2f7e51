"""Once re-indexed the words memory.text.KEPT_WORDS stopped treating as stopwords.

That work rebuilt an index that 0012 replaces with one derived from the facts, so this step
now does nothing (it used to import live project code, which a migration must not).
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0004_term_bitmaps"),
    ]

    operations = []
