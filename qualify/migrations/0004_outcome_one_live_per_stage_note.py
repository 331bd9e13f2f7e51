from django.db import migrations, models
from django.utils import timezone


def soft_delete_repeats(apps, schema_editor):
    """Before the constraint: of live outcomes with the same posting, stage and note, keep the
    first recorded and soft-delete the rest (the funnel counts a stage once per posting)."""
    Outcome = apps.get_model("qualify", "Outcome")
    seen, repeats = set(), []
    live = Outcome._base_manager.filter(deleted_at__isnull=True).order_by("id")
    for pk, posting_id, stage, note in live.values_list("pk", "posting_id", "stage", "note"):
        key = (posting_id, stage, note)
        if key in seen:
            repeats.append(pk)
        seen.add(key)
    Outcome._base_manager.filter(pk__in=repeats).update(deleted_at=timezone.now())


class Migration(migrations.Migration):
    dependencies = [
        ("qualify", "0003_posting_external_id_fact_why"),
    ]

    operations = [
        migrations.RunPython(soft_delete_repeats, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="outcome",
            constraint=models.UniqueConstraint(
                condition=models.Q(("deleted_at__isnull", True)),
                fields=("posting", "stage", "note"),
                name="qualify_outcome_one_live_per_stage_note",
            ),
        ),
    ]
