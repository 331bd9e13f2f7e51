"""The holdout arm on qualifications, decision facts as rows (backfilled from ``fact_ids``),
the installation's holdout salt, replay's evaluation records, and NFC company keys.

Self-contained: the backfills use historical models and the standard library only.
"""

import unicodedata

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


def backfill_decision_facts(apps, schema_editor):
    Qualification = apps.get_model("qualify", "Qualification")
    DecisionFact = apps.get_model("qualify", "DecisionFact")
    batch = []
    rows = Qualification._default_manager.exclude(fact_count=0).values_list("id", "fact_ids")
    for qualification_id, fact_ids in rows.iterator(chunk_size=2000):
        for memory_id in dict.fromkeys(fact_ids or []):
            if isinstance(memory_id, int) and not isinstance(memory_id, bool):
                batch.append(DecisionFact(qualification_id=qualification_id, memory_id=memory_id))
        if len(batch) >= 2000:
            DecisionFact._default_manager.bulk_create(batch)
            batch = []
    DecisionFact._default_manager.bulk_create(batch)


def nfc_company_keys(apps, schema_editor):
    """Company keys as memory.text.company_key makes them (NFC), where no live twin objects."""
    Company = apps.get_model("qualify", "Company")
    taken = set(
        Company._default_manager.filter(deleted_at__isnull=True).values_list("name_key", flat=True)
    )
    for company in Company._default_manager.filter(deleted_at__isnull=True).iterator():
        key = " ".join(unicodedata.normalize("NFC", company.name).split()).casefold()
        if key != company.name_key and key not in taken:
            taken.discard(company.name_key)
            taken.add(key)
            Company._default_manager.filter(pk=company.pk).update(name_key=key)


class Migration(migrations.Migration):
    dependencies = [("qualify", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="qualification",
            name="arm",
            field=models.CharField(
                choices=[("memory", "Memory"), ("holdout", "Holdout"), ("none", "None")],
                default="none",
                max_length=8,
            ),
        ),
        migrations.AddConstraint(
            model_name="qualification",
            constraint=models.CheckConstraint(
                condition=models.Q(("arm__in", ["memory", "holdout", "none"])),
                name="qualify_qualification_arm_known",
            ),
        ),
        migrations.CreateModel(
            name="DecisionFact",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("memory_id", models.BigIntegerField()),
                (
                    "qualification",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="decision_facts",
                        to="qualify.qualification",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(
                        fields=["memory_id", "qualification"], name="qualify_decfact_by_memory"
                    )
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("qualification", "memory_id"), name="qualify_decisionfact_once"
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="InstallationSalt",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("value", models.CharField(editable=False, max_length=64)),
                (
                    "created_at",
                    models.DateTimeField(default=django.utils.timezone.now, editable=False),
                ),
            ],
            options={
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("id", 1)), name="qualify_installationsalt_single_row"
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="ReplayRun",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "started_at",
                    models.DateTimeField(default=django.utils.timezone.now, editable=False),
                ),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                ("since", models.DateTimeField(blank=True, null=True)),
                ("limit", models.PositiveIntegerField(blank=True, null=True)),
                ("versions", models.JSONField(default=list)),
                ("posting_ids", models.JSONField(default=list)),
                ("stopped", models.CharField(blank=True, default="", max_length=500)),
            ],
        ),
        migrations.CreateModel(
            name="ReplayAnswer",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("prompt_version", models.CharField(max_length=64)),
                (
                    "verdict",
                    models.CharField(
                        blank=True,
                        choices=[("qualified", "Qualified"), ("rejected", "Rejected")],
                        max_length=16,
                        null=True,
                    ),
                ),
                ("fit_score", models.PositiveSmallIntegerField(blank=True, null=True)),
                ("criteria", models.JSONField(blank=True, default=dict)),
                ("progressed", models.BooleanField()),
                ("fact_ids", models.JSONField(blank=True, default=list)),
                ("memory_error", models.CharField(blank=True, default="", max_length=300)),
                ("error", models.CharField(blank=True, default="", max_length=500)),
                ("latency_ms", models.PositiveIntegerField(default=0)),
                (
                    "created_at",
                    models.DateTimeField(default=django.utils.timezone.now, editable=False),
                ),
                (
                    "posting",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="qualify.posting",
                    ),
                ),
                (
                    "run",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="answers",
                        to="qualify.replayrun",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("run", "posting", "prompt_version"),
                        name="qualify_replayanswer_once",
                    )
                ],
            },
        ),
        migrations.RunPython(backfill_decision_facts, migrations.RunPython.noop),
        migrations.RunPython(nfc_company_keys, migrations.RunPython.noop),
    ]
