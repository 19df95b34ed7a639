import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("coaching", "0001_initial")]

    operations = [
        migrations.CreateModel(
            name="ChatLink",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("expires_at", models.DateTimeField()),
                ("revoked_at", models.DateTimeField(blank=True, null=True)),
                ("learner", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="chat_links",
                                              to="coaching.learner")),
            ],
        ),
    ]
