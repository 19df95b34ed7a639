"""Issue 34: the study's pre-registered intended use; enrolments kept as pseudonymous stubs when
a learner is erased (learner SET_NULL, research_id copied); the enrolment audit trail."""

import django.db.models.deletion
from django.db import migrations, models


def copy_research_ids(apps, schema_editor):
    Enrollment = apps.get_model("research", "Enrollment")
    for enrollment in Enrollment.objects.select_related("learner").filter(research_id__isnull=True):
        enrollment.research_id = enrollment.learner.research_id
        enrollment.save(update_fields=["research_id"])


class Migration(migrations.Migration):

    dependencies = [
        ("research", "0004_study_public_id"),
        ("coaching", "0007_session_history"),
    ]

    operations = [
        migrations.AddField(
            model_name="study",
            name="intended_sessions_per_week",
            field=models.PositiveSmallIntegerField(
                default=3,
                help_text="Sessions per week the protocol asks of every participant (the primary outcome's target)."),
        ),
        migrations.AddField(
            model_name="study",
            name="intended_use",
            field=models.TextField(blank=True,
                                   help_text="The protocol's intended use and why, in words; printed in the codebook."),
        ),
        migrations.AddField(
            model_name="enrollment",
            name="research_id",
            field=models.UUIDField(editable=False, null=True),
        ),
        migrations.RunPython(copy_research_ids, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="enrollment",
            name="learner",
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                                    related_name="enrollments", to="identity.learner"),
        ),
        migrations.CreateModel(
            name="EnrollmentEvent",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("kind", models.CharField(max_length=20)),
                ("detail", models.CharField(blank=True, max_length=200)),
                ("at", models.DateTimeField(auto_now_add=True)),
                ("enrollment", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="events",
                                                 to="research.enrollment")),
            ],
            options={"ordering": ["at", "id"]},
        ),
    ]
