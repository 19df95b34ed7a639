"""Each fact's hubness (memory/hubness.py): the mean cosine to its nearest other live facts of the
learner, which search subtracts from the vector score. Existing facts are computed here, one
learner at a time, as the daily consolidation does (memory.services.hubness)."""

from django.db import migrations, models


def compute_existing(apps, schema_editor):
    from memory.hubness import exact_hubness
    from memory.vectors import unit_rows

    Fact = apps.get_model("memory", "Fact")
    live = Fact.objects.filter(superseded_by__isnull=True, embedding__isnull=False)
    for learner_id in live.values_list("learner_id", flat=True).distinct().order_by():
        rows = list(live.filter(learner_id=learner_id).values_list("id", "embedding"))
        values = exact_hubness(unit_rows([vec for _, vec in rows]))
        Fact.objects.bulk_update([Fact(pk=fid, hubness=h) for (fid, _), h in zip(rows, values, strict=True)],
                                 ["hubness"], batch_size=500)


class Migration(migrations.Migration):

    dependencies = [
        ("memory", "0011_fact_speaker_index"),
    ]

    operations = [
        migrations.AddField(
            model_name="fact",
            name="hubness",
            field=models.FloatField(default=0.0),
        ),
        migrations.RunPython(compute_existing, migrations.RunPython.noop),
    ]
