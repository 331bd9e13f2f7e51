"""The term-bitmap keyword index's table (dropped again by 0012).

It used to be filled here by live project code (memory.bitmaps); 0012 derives the keyword
index from the facts themselves, so filling it on the way is no longer needed.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0003_recall_recent_index"),
    ]

    operations = [
        migrations.CreateModel(
            name="TermBitmap",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("term", models.CharField(max_length=210)),
                ("block", models.BigIntegerField()),
                ("bits", models.BinaryField()),
            ],
            options={
                "db_table": "memory_term_bitmaps",
                "constraints": [
                    models.UniqueConstraint(
                        fields=("term", "block"), name="memory_term_bitmaps_unique"
                    )
                ],
            },
        ),
    ]
