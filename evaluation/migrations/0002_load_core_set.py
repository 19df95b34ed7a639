"""Load the shipped eval set (core v1) and rubric v1. Idempotent (update_or_create by natural key);
`manage.py load_eval_set` does the same outside migrations."""

import json
from pathlib import Path

from django.db import migrations

DATA = Path(__file__).resolve().parent.parent / "data"


def load(apps, schema_editor):
    EvalSet = apps.get_model("evaluation", "EvalSet")
    Transcript = apps.get_model("evaluation", "Transcript")
    Rubric = apps.get_model("evaluation", "Rubric")
    rubric = json.loads((DATA / "rubric_v1.json").read_text())
    Rubric.objects.get_or_create(version=rubric["version"],
                                 defaults={"dimensions": rubric["dimensions"], "notes": rubric.get("notes", "")})
    data = json.loads((DATA / "core_v1.json").read_text())
    eval_set, _ = EvalSet.objects.update_or_create(name=data["name"], version=data["version"],
                                                   defaults={"description": data.get("description", "")})
    for position, item in enumerate(data["transcripts"]):
        Transcript.objects.update_or_create(
            eval_set=eval_set, slug=item["slug"],
            defaults={"title": item.get("title", item["slug"]), "tags": item.get("tags", []),
                      "starting_profile": item.get("profile", {}), "memory_snapshot": item.get("memory", []),
                      "learner_turns": [{"text": t} for t in item["turns"]], "prior_messages": item.get("prior", []),
                      "expected_behaviour": item.get("expected", ""), "expectations": item.get("expectations", {}),
                      "position": position})


class Migration(migrations.Migration):
    dependencies = [("evaluation", "0001_initial")]
    operations = [migrations.RunPython(load, migrations.RunPython.noop)]
