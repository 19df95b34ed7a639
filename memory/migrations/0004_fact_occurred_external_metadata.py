from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("memory", "0003_fact_valid_to")]

    operations = [
        migrations.AddField(model_name="fact", name="occurred_at", field=models.DateTimeField(blank=True, null=True)),
        migrations.AddField(model_name="fact", name="external_id",
                            field=models.CharField(blank=True, default="", max_length=200)),
        migrations.AddField(model_name="fact", name="metadata", field=models.JSONField(blank=True, default=dict)),
        migrations.AddIndex(
            model_name="fact",
            index=models.Index(condition=models.Q(("external_id", ""), _negated=True),
                               fields=["learner", "external_id"], name="fact_learner_external_idx"),
        ),
    ]
