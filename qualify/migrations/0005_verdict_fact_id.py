from django.db import migrations, models


def link_verdict_facts(apps, schema_editor):
    """Each live verdict gets the live verdict fact written for it (its ref names it); a twin
    posting's verdict whose fact was deduplicated into another's stays unlinked, and its next
    repeat links it (qualify.writer.repeat)."""
    Qualification = apps.get_model("qualify", "Qualification")
    Memory = apps.get_model("memory", "Memory")
    facts = dict(
        Memory._base_manager.filter(
            deleted_at__isnull=True, source="verdict", ref__startswith="qualification:"
        ).values_list("ref", "id")
    )
    linked = []
    live = Qualification._base_manager.filter(deleted_at__isnull=True, verdict__isnull=False)
    for q in live.only("pk").iterator(chunk_size=2000):
        if (fact_id := facts.get(f"qualification:{q.pk}")) is not None:
            q.verdict_fact_id = fact_id
            linked.append(q)
    Qualification._base_manager.bulk_update(linked, ["verdict_fact_id"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0015_keep_go"),
        ("qualify", "0004_outcome_one_live_per_stage_note"),
    ]

    operations = [
        migrations.AddField(
            model_name="qualification",
            name="verdict_fact_id",
            field=models.BigIntegerField(blank=True, editable=False, null=True),
        ),
        migrations.AddIndex(
            model_name="qualification",
            index=models.Index(
                condition=models.Q(
                    ("deleted_at__isnull", True), ("verdict_fact_id__isnull", False)
                ),
                fields=["verdict_fact_id"],
                name="qualify_qualif_live_by_vfact",
            ),
        ),
        migrations.RunPython(link_verdict_facts, migrations.RunPython.noop),
    ]
