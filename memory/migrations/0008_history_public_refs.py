"""Fact history rows stored before now name other facts and summaries by their public UUID.

Clients read the rows as stored (`GET /api/v1/memory/facts/<id>/history`), and they held integer
keys: `superseded_by`, `by`, `replaces`, `conflicts_with`, `merged` (a fact), `summary` (a summary)
and `source_message` (a message, which has no public id: it becomes `source_conversation`, the
public id of its conversation). A key whose row is gone becomes null. The key lists are copied
here, not imported, so that this migration keeps meaning what it meant when it was written.

Reverse is a no-op: nothing reads these values back (the rows are a record), so the code before
this migration shows a row with UUIDs as well as one with integers; and a strengthening's message
cannot be recovered from its conversation."""

from django.db import migrations

BATCH = 1000
FACT_KEYS = ("superseded_by", "by", "replaces", "conflicts_with", "merged")
SUMMARY_KEYS = ("summary",)
MESSAGE_KEY, CONVERSATION_KEY = "source_message", "source_conversation"


def _is_key(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _wanted(snapshots, keys):
    return {s[k] for s in snapshots for k in keys if _is_key(s.get(k))}


def _rewrite(snapshot, facts, summaries, conversations) -> bool:
    changed = False
    for keys, public in ((FACT_KEYS, facts), (SUMMARY_KEYS, summaries)):
        for key in keys:
            if _is_key(snapshot.get(key)):
                snapshot[key] = public.get(snapshot[key])
                changed = True
    if MESSAGE_KEY in snapshot:
        message = snapshot.pop(MESSAGE_KEY)
        snapshot[CONVERSATION_KEY] = conversations.get(message) if _is_key(message) else None
        changed = True
    return changed


def forward(apps, schema_editor):
    history = apps.get_model("memory", "FactHistory")
    fact = apps.get_model("memory", "Fact")
    summary = apps.get_model("memory", "Summary")
    message = apps.get_model("identity", "Message")

    def public(model, pks, field="public_id"):
        if not pks:
            return {}
        return {pk: str(value) for pk, value in model.objects.filter(pk__in=pks).values_list("pk", field)
                if value is not None}

    def flush(rows):
        snapshots = [s for row in rows for s in (row.before, row.after) if isinstance(s, dict)]
        facts = public(fact, _wanted(snapshots, FACT_KEYS))
        summaries = public(summary, _wanted(snapshots, SUMMARY_KEYS))
        conversations = public(message, _wanted(snapshots, (MESSAGE_KEY,)), "conversation__public_id")
        changed = []
        for row in rows:
            touched = [_rewrite(s, facts, summaries, conversations)
                       for s in (row.before, row.after) if isinstance(s, dict)]
            if any(touched):
                changed.append(row)
        history.objects.bulk_update(changed, ["before", "after"])

    rows = []
    for row in history.objects.only("pk", "before", "after").order_by("pk").iterator(chunk_size=BATCH):
        rows.append(row)
        if len(rows) == BATCH:
            flush(rows)
            rows = []
    flush(rows)


class Migration(migrations.Migration):
    dependencies = [("memory", "0007_summary_public_id"), ("identity", "0002_public_ids")]

    operations = [migrations.RunPython(forward, migrations.RunPython.noop)]
