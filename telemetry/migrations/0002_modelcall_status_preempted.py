from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("telemetry", "0001_initial"),
    ]

    operations = [
        migrations.AlterField(
            model_name="modelcall",
            name="status",
            field=models.CharField(
                choices=[("ok", "Ok"), ("error", "Error"), ("timeout", "Timeout"), ("parse_error", "Parse Error"),
                         ("cancelled", "Cancelled"), ("preempted", "Preempted")],
                default="ok", max_length=20),
        ),
    ]
