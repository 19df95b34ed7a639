"""Staff roles as Django groups. Idempotent: running it again resets each group to exactly the
permissions listed here (a permission granted by hand to a group is removed, so the code stays the
single description of what a role may do)."""

from __future__ import annotations

from django.contrib.auth.models import Group, Permission
from django.db import transaction

AUDITOR = "auditor"
RESEARCHER = "researcher"
ADMIN = "admin"

# app_label.codename; the auditor reads everything a conversation left behind and tags defects,
# but gets nothing from the research app (so no export).
AUDITOR_PERMISSIONS = (
    "identity.view_conversation", "identity.view_message", "coaching.view_turn", "identity.view_learner",
    "coaching.view_learnerprofile",
    "telemetry.view_modelcall",
    "memory.view_fact", "memory.view_surprisefact", "memory.view_facthistory", "memory.view_summary",
    "memory.view_entity", "memory.view_mention", "memory.view_relation",
    "review.view_conversationaudit", "review.view_defecttag", "review.add_defecttag",
    "review.view_defecttaghistory", "review.view_message_text",
    # "Send tagged turns to an evaluation set" freezes transcripts.
    "evaluation.view_evalset", "evaluation.view_transcript", "evaluation.add_transcript",
)
# Studies and exports only: no coaching, memory or telemetry rows, and never view_message_text.
RESEARCHER_PERMISSIONS = (
    "research.view_study", "research.view_enrollment", "research.view_exportlog",
    "research.export_research_data",
)


def _permissions(names: tuple[str, ...]) -> tuple[list[Permission], list[str]]:
    wanted = {tuple(name.split(".", 1)) for name in names}
    found = list(Permission.objects.filter(content_type__app_label__in={a for a, _ in wanted},
                                           codename__in={c for _, c in wanted}).select_related("content_type"))
    found = [p for p in found if (p.content_type.app_label, p.codename) in wanted]
    have = {(p.content_type.app_label, p.codename) for p in found}
    missing = sorted(f"{a}.{c}" for a, c in wanted - have)
    return found, missing


@transaction.atomic
def setup_roles() -> dict[str, dict[str, object]]:
    report: dict[str, dict[str, object]] = {}
    for name, names in ((AUDITOR, AUDITOR_PERMISSIONS), (RESEARCHER, RESEARCHER_PERMISSIONS)):
        group, _ = Group.objects.get_or_create(name=name)
        perms, missing = _permissions(names)
        group.permissions.set(perms)
        report[name] = {"permissions": len(perms), "missing": missing}
    group, _ = Group.objects.get_or_create(name=ADMIN)
    everything = list(Permission.objects.all())
    group.permissions.set(everything)
    report[ADMIN] = {"permissions": len(everything), "missing": []}
    return report


def setup_roles_after_migrate(sender, using="default", **kwargs) -> None:
    # Only the default database holds auth tables here; other aliases would not have them.
    if using != "default":
        return
    setup_roles()
