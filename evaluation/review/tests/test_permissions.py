"""Who sees what: researchers never see message text, auditors cannot export, anonymous users are
sent to the login page. The text checks scan the HTML of every admin page (index, app indexes,
every changelist, change form and history page, every custom admin view) for the known strings."""

import datetime as dt

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission
from django.urls import URLPattern, reverse

from coaching.models import Message, Turn
from coaching.research.models import ExportLog, ReminderDelivery, Study
from evaluation.models import EvalRun, JudgeScore, ReplyResult, Transcript
from evaluation.review.redaction import MessageTextAdminMixin, needs_redaction
from evaluation.review.services import defect_tag_create, defect_tags_send_to_eval_set
from evaluation.review.tests import factories
from evaluation.review.tests.factories import SECRET_MARKERS

pytestmark = pytest.mark.django_db

STANDARD = {"changelist", "add", "history", "delete", "change", "autocomplete"}


@pytest.fixture
def world(roles):
    """Every registered admin has at least one row; the conversation rows carry the markers."""
    conversation = factories.conversation_with_turns(3)
    turn = Turn.objects.filter(learner_message__conversation=conversation).order_by("id").first()
    tag = defect_tag_create(turn_id=turn.pk, category="grounding", layer="architecture",
                            note="coach said COACHSAID about a session that never existed")
    defect_tags_send_to_eval_set(tag_ids=[tag.pk])  # a frozen transcript with the learner's words
    transcript = Transcript.objects.get(frozen_from_conversation_id=conversation.pk)
    run = factories.make_row(EvalRun)
    reply = ReplyResult.objects.create(run=run, transcript=transcript, turn_index=0,
                                       learner_text="LEARNERSAID again", reply_text="COACHSAID again")
    JudgeScore.objects.create(reply=reply, dimension="tone", score=2, reason="it said COACHSAID again")
    study = Study.objects.create(name="pilot", start_date=dt.date(2026, 1, 5))
    ExportLog.objects.create(study=study, via="admin", format="csv", schema_version="1")
    ReminderDelivery.objects.create(learner=conversation.learner, slot="checkin:2026-01-05",
                                    message=turn.learner_message, channel="in_app")
    for model, model_admin in admin.site._registry.items():
        if not model_admin.get_queryset(_FakeRequest()).exists():
            factories.make_row(model)
    return {"conversation": conversation, "turn": turn, "study": study, "run": run}


class _FakeRequest:
    class user:
        is_active = is_staff = is_superuser = True

        @staticmethod
        def has_perm(_perm):
            return True


def _sample_kwargs(pattern: URLPattern, model_admin, world) -> dict:
    values = {"conversation_id": world["conversation"].pk, "learner_id": world["conversation"].learner_id,
              "trace_id": world["turn"].trace_id, "run_id": world["run"].pk}
    kwargs = {}
    for name in pattern.pattern.converters:
        if name in ("pk", "id"):
            kwargs[name] = model_admin.get_queryset(_FakeRequest()).values_list("pk", flat=True).first()
        elif name in values:
            kwargs[name] = values[name]
        else:
            pytest.fail(f"add a sample value for <{name}> in {pattern.name}")
    return kwargs


def admin_pages(world) -> list[str]:
    """Every page of the admin site that can show a row."""
    urls = [reverse("admin:index")]
    seen_apps = set()
    for model, model_admin in admin.site._registry.items():
        opts = model._meta
        if opts.app_label not in seen_apps:
            seen_apps.add(opts.app_label)
            urls.append(reverse("admin:app_list", args=[opts.app_label]))
        urls.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"))
        obj = model_admin.get_queryset(_FakeRequest()).order_by("pk").first()
        if obj is not None:
            urls.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk]))
            urls.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_history", args=[obj.pk]))
        prefix = f"{opts.app_label}_{opts.model_name}_"
        for pattern in model_admin.get_urls():
            name = pattern.name or ""
            if not isinstance(pattern, URLPattern) or not name or (
                    name.startswith(prefix) and name[len(prefix):] in STANDARD):
                continue
            if name in ("review_conversationaudit_tag", "review_conversationaudit_goto"):
                continue  # POST only / needs a query string (added below)
            urls.append(reverse(f"admin:{name}", kwargs=_sample_kwargs(pattern, model_admin, world)))
    urls.append(reverse("admin:review_conversationaudit_goto") + f"?trace={world['turn'].trace_id}")
    return urls


def scan(client, urls) -> tuple[dict[str, int], list[tuple[str, str]]]:
    statuses, leaks = {}, []
    for url in urls:
        response = client.get(url)
        statuses[url] = response.status_code
        body = response.content.decode("utf-8", "replace")
        leaks += [(url, marker) for marker in SECRET_MARKERS if marker in body]
    return statuses, leaks


def test_scan_finds_text_for_a_user_allowed_to_read_it(client, world, superuser):
    """The positive control: the same scan does see the text when it is allowed (so the scans
    below can fail)."""
    client.force_login(superuser)
    statuses, leaks = scan(client, admin_pages(world))
    found = {marker for _, marker in leaks}
    assert {"LEARNERSAID", "COACHSAID", "FACTTEXT", "CONTEXTTEXT", "PROMPTTEXT", "SUMMARYTEXT"} <= found
    assert all(code in (200, 302) for code in statuses.values()), {u: c for u, c in statuses.items()
                                                                   if c not in (200, 302)}


def test_researcher_sees_no_message_text_anywhere(client, world, researcher):
    client.force_login(researcher)
    urls = admin_pages(world)
    statuses, leaks = scan(client, urls)
    assert leaks == []
    # ... and still works as a researcher: studies, enrolments and export logs are readable.
    for name in ("research_study_changelist", "research_enrollment_changelist", "research_exportlog_changelist"):
        assert statuses[reverse(f"admin:{name}")] == 200
    assert statuses[reverse("admin:research_study_dashboard", args=[world["study"].pk])] == 200
    audit = reverse("admin:review_conversationaudit_audit", args=[world["conversation"].pk])
    assert statuses[audit] == 403


def test_viewer_without_text_permission_sees_pages_but_no_text(client, world, roles):
    """Every view permission except `review.view_message_text`: pages render, text does not."""
    viewer = factories.user()
    viewer.user_permissions.set(Permission.objects.filter(codename__startswith="view_")
                                .exclude(codename="view_message_text"))
    viewer.user_permissions.add(Permission.objects.get(codename="add_defecttag"))
    client.force_login(viewer)
    statuses, leaks = scan(client, admin_pages(world))
    assert leaks == []
    audit = reverse("admin:review_conversationaudit_audit", args=[world["conversation"].pk])
    assert statuses[audit] == 200
    message = Message.objects.filter(role="learner").first()
    assert statuses[reverse("admin:identity_message_change", args=[message.pk])] == 200
    assert statuses[reverse("admin:identity_message_changelist")] == 200
    assert statuses[reverse("admin:telemetry_modelcall_changelist")] == 200
    assert statuses[reverse("admin:memory_fact_changelist")] == 200
    # searching the text is a leak too ("did anyone write X?"): text is not searched for this user
    tags = reverse("admin:review_defecttag_changelist")
    assert client.get(tags, {"q": "never existed"}).context["cl"].result_count == 0
    viewer.user_permissions.add(Permission.objects.get(codename="view_message_text"))
    assert client.get(tags, {"q": "never existed"}).context["cl"].result_count == 1


def test_every_admin_that_shows_text_redacts_it():
    missing = [model._meta.label for model, model_admin in admin.site._registry.items()
               if needs_redaction(model_admin) and not isinstance(model_admin, MessageTextAdminMixin)]
    assert missing == []


def test_auditor_cannot_export(client, world, auditor):
    client.force_login(auditor)
    study = world["study"]
    response = client.get(f"/api/v1/research/studies/{study.public_id}/export", {"format": "csv"})
    assert response.status_code == 403
    response = client.post(reverse("admin:research_study_changelist"),
                           {"action": "export_csv", "_selected_action": [study.pk]})
    assert response.status_code == 403
    assert not ExportLog.objects.filter(user=auditor).exists()
    assert not auditor.has_perm("research.export_research_data")


def test_researcher_can_export(client, world, researcher):
    """The 403 above is about the auditor, not a broken endpoint."""
    client.force_login(researcher)
    response = client.get(f"/api/v1/research/studies/{world['study'].public_id}/export", {"format": "csv"})
    assert response.status_code == 200


@pytest.mark.parametrize("name,args", [
    ("review_conversationaudit_changelist", []), ("review_defecttag_changelist", []),
    ("review_defecttag_report", []), ("review_conversationaudit_goto", []),
    ("identity_message_changelist", []), ("telemetry_modelcall_changelist", []), ("memory_fact_changelist", []),
])
def test_anonymous_is_sent_to_login(client, name, args):
    url = reverse(f"admin:{name}", args=args)
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith(f"/admin/login/?next={url}")


def test_anonymous_is_sent_to_login_from_guarded_custom_views(client, world):
    for url in (reverse("admin:telemetry_modelcall_trace", args=[world["turn"].trace_id]),
                reverse("admin:memory_entity_graph", args=[world["conversation"].learner_id])):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/"), url


def test_anonymous_audit_and_tag_are_sent_to_login(client, world):
    conversation = world["conversation"]
    url = reverse("admin:review_conversationaudit_audit", args=[conversation.pk])
    response = client.get(url)
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
    response = client.post(reverse("admin:review_conversationaudit_tag", args=[conversation.pk]),
                           {"turn_id": world["turn"].pk, "category": "other", "layer": "prompt"})
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")


def test_telemetry_and_memory_are_read_only_even_for_admins(client, world, superuser):
    """Changes go through services, which leave an audit row; the admin only reads."""
    client.force_login(superuser)
    for name in ("telemetry_modelcall", "memory_fact", "memory_surprisefact", "memory_summary", "memory_entity",
                 "memory_relation"):
        model_admin = next(a for m, a in admin.site._registry.items()
                           if f"{m._meta.app_label}_{m._meta.model_name}" == name)
        request = type("R", (), {"user": superuser})()
        assert not model_admin.has_add_permission(request), name
        assert not model_admin.has_change_permission(request), name
        assert not model_admin.has_delete_permission(request), name
    call = world["turn"].trace_id
    from telemetry.models import ModelCall

    pk = ModelCall.objects.filter(trace_id=call).first().pk
    response = client.post(reverse("admin:telemetry_modelcall_change", args=[pk]), {"status": "error"})
    assert response.status_code == 403
    assert ModelCall.objects.get(pk=pk).status == "ok"

