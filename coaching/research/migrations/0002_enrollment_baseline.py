from django.db import migrations, models


def freeze_existing_baselines(apps, schema_editor):
    """Enrolments made before this migration had no stored baseline: the best available copy is the
    profile and time zone as they are now (later edits will no longer reach them)."""
    Enrollment = apps.get_model("research", "Enrollment")
    LearnerProfile = apps.get_model("coaching", "LearnerProfile")
    for enrollment in Enrollment.objects.select_related("learner").iterator():
        profile = LearnerProfile.objects.filter(learner_id=enrollment.learner_id).first()
        enrollment.timezone = enrollment.learner.timezone or "UTC"
        if profile is not None:
            enrollment.baseline_goal_category = profile.goal_category or ""
            enrollment.baseline_weekly_hours = profile.weekly_hours
            enrollment.baseline_best_time = profile.best_time or ""
            enrollment.baseline_confidence = profile.confidence
        enrollment.save(update_fields=["timezone", "baseline_goal_category", "baseline_weekly_hours",
                                       "baseline_best_time", "baseline_confidence"])


class Migration(migrations.Migration):

    dependencies = [
        ("coaching", "0001_initial"),
        ("research", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="enrollment",
            name="baseline_goal_category",
            field=models.CharField(blank=True, max_length=20),
        ),
        migrations.AddField(
            model_name="enrollment",
            name="baseline_weekly_hours",
            field=models.DecimalField(blank=True, decimal_places=1, max_digits=4, null=True),
        ),
        migrations.AddField(
            model_name="enrollment",
            name="baseline_best_time",
            field=models.CharField(blank=True, max_length=12),
        ),
        migrations.AddField(
            model_name="enrollment",
            name="baseline_confidence",
            field=models.PositiveSmallIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="enrollment",
            name="timezone",
            field=models.CharField(default="UTC", max_length=64),
        ),
        migrations.RemoveField(
            model_name="enrollment",
            name="date_shift_days",
        ),
        migrations.AlterField(
            model_name="study",
            name="date_shift_enabled",
            field=models.BooleanField(
                default=False,
                help_text="Shift every date of the export by one secret whole-week offset for the whole study "
                          "(intervals, weekdays and study weeks are kept; the real calendar dates are not in the file).",
            ),
        ),
        migrations.RunPython(freeze_existing_baselines, migrations.RunPython.noop),
    ]
