from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("memory", "0002_surprise_queue")]

    operations = [
        migrations.AddField(model_name="fact", name="valid_to", field=models.DateTimeField(blank=True, null=True)),
    ]
