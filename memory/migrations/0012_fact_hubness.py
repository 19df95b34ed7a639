"""Each fact's hubness (memory/hubness.py): the cosines to its nearest other live facts of the
learner and their mean, which search subtracts from the vector score. Existing facts are computed
here, one learner at a time, as the daily consolidation does (memory.services.hubness)."""

import numpy as np
from django.db import migrations, models


def compute_existing(apps, schema_editor):
    from memory.hubness import exact_neighbour_cosines, hubness_of
    from memory.vectors import as_array

    Fact = apps.get_model("memory", "Fact")
    live = Fact.objects.filter(superseded_by__isnull=True, embedding__isnull=False)
    for learner_id in live.values_list("learner_id", flat=True).distinct().order_by():
        rows = list(live.filter(learner_id=learner_id).values_list("id", "embedding"))
        mat = np.vstack([as_array(vec) for _, vec in rows])
        mat /= np.maximum(np.linalg.norm(mat, axis=1, keepdims=True), 1e-9)
        Fact.objects.bulk_update(
            [Fact(pk=fid, neighbour_cosines=cos, hubness=hubness_of(cos))
             for (fid, _), cos in zip(rows, exact_neighbour_cosines(mat), strict=True)],
            ["neighbour_cosines", "hubness"], batch_size=500)


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
        migrations.AddField(
            model_name="fact",
            name="neighbour_cosines",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.RunPython(compute_existing, migrations.RunPython.noop),
    ]
