"""Plans, planned sessions, check-ins and turns as REST resources, and the one URL style.

Sessions and check-ins go through the services the coach's tools call (`session_schedule`,
`checkin_log`, `session_reschedule`): what a client does here is what a "done" in the chat does.
No model is involved in any of these routes."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from coaching import services
from coaching.models import CheckIn, Message, PlannedSession, SessionStatusChange, Turn
from coaching.tests.conftest import make_client, onboarded_learner

pytestmark = pytest.mark.django_db


def _error(response) -> dict:
    body = response.json()
    assert set(body) == {"error"} and {"code", "message", "field"} <= set(body["error"]), body
    return body["error"]


def _next_monday(tz: str, hour: int = 9) -> datetime:
    now = timezone.now().astimezone(ZoneInfo(tz))
    day = (now + timedelta(days=7 - now.weekday())).replace(hour=hour, minute=0, second=0, microsecond=0)
    return day


def test_plan_a_session_list_by_week_reschedule_and_mark_done(api):
    client, http = api
    learner = services.learner_create(client=client, timezone_name="Europe/Berlin")
    monday = _next_monday("Europe/Berlin")
    # Naive local time: the learner's own clock (Berlin), as the coach's tool takes it.
    created = http.post(f"/api/v1/learners/{learner.research_id}/sessions",
                        {"start": monday.replace(tzinfo=None).isoformat(), "duration_minutes": 45,
                         "topic": "verbs"}, format="json")
    assert created.status_code == 201, created.content
    session = created.json()
    assert session["id"] == str(PlannedSession.objects.get().public_id)  # the public id, never the key
    assert session["learner"] == str(learner.research_id)
    assert session["week_start"] == monday.date().isoformat() and session["status"] == "planned"
    assert datetime.fromisoformat(session["start"]) == monday

    week = http.get(f"/api/v1/learners/{learner.research_id}/sessions", {"week": (monday + timedelta(days=3))
                                                                         .date().isoformat()}).json()
    assert week["count"] == 1 and week["results"][0]["id"] == session["id"]
    assert {"next", "previous"} <= set(week)
    other_week = http.get(f"/api/v1/learners/{learner.research_id}/sessions",
                          {"week": (monday + timedelta(days=7)).date().isoformat()}).json()
    assert other_week["count"] == 0
    plans = http.get(f"/api/v1/learners/{learner.research_id}/plans").json()["results"]
    assert [p["week_start"] for p in plans] == [monday.date().isoformat()]
    assert [s["id"] for s in plans[0]["sessions"]] == [session["id"]]

    # Reschedule into the next week: the session moves to that week's plan.
    later = monday + timedelta(days=8)
    moved = http.patch(f"/api/v1/sessions/{session['id']}", {"start": later.isoformat(), "topic": "nouns"},
                       format="json")
    assert moved.status_code == 200, moved.content
    assert moved.json()["week_start"] == (monday + timedelta(days=7)).date().isoformat()
    assert moved.json()["topic"] == "nouns" and moved.json()["duration_minutes"] == 45

    done = http.post(f"/api/v1/sessions/{session['id']}/checkins", {"outcome": "completed"}, format="json")
    assert done.status_code == 201, done.content
    assert done.json()["outcome"] == "completed" and done.json()["session_detail"]["status"] == "completed"
    row = PlannedSession.objects.get(public_id=session["id"])
    assert row.status == "completed" and row.completion_source == "self_report" and row.completed_at
    assert CheckIn.objects.get(session=row).outcome == "completed"
    listed = http.get(f"/api/v1/learners/{learner.research_id}/checkins").json()
    assert listed["count"] == 1 and listed["results"][0]["session"] == session["id"]

    # A reported session is history: moving it is a 409 in the error shape.
    refused = http.patch(f"/api/v1/sessions/{session['id']}", {"duration_minutes": 30}, format="json")
    assert refused.status_code == 409 and _error(refused)["code"] == "not_planned"


def test_mark_skipped_and_bad_input(api):
    client, http = api
    learner = onboarded_learner(client)
    session = services.session_schedule(learner=learner, start=timezone.now() + timedelta(days=1),
                                        duration_minutes=30)
    skipped = http.post(f"/api/v1/sessions/{session.public_id}/checkins", {"outcome": "skipped"}, format="json")
    assert skipped.status_code == 201 and PlannedSession.objects.get(pk=session.pk).status == "skipped"
    # the one audited writer names the API as the source of the change
    assert list(SessionStatusChange.objects.filter(session=session).values_list("to_status", "source")) == [
        ("skipped", "api")]
    base = f"/api/v1/learners/{learner.research_id}/sessions"
    cases = [
        (http.post(base, {"start": "2020-01-01T09:00:00Z", "duration_minutes": 30}, format="json"), "start"),
        (http.post(base, {"start": "soon", "duration_minutes": 30}, format="json"), "start"),
        (http.post(base, {"start": (timezone.now() + timedelta(days=2)).isoformat(), "duration_minutes": 601},
                   format="json"), "duration_minutes"),
        (http.patch(f"/api/v1/sessions/{session.public_id}", {}, format="json"), "start"),
        (http.post(f"/api/v1/sessions/{session.public_id}/checkins", {"outcome": "maybe"}, format="json"),
         "outcome"),
        (http.get(base, {"week": "next tuesday"}), "week"),
    ]
    for response, field in cases:
        assert response.status_code == 400, response.content
        assert _error(response)["field"] == field
    assert PlannedSession.objects.filter(plan__learner=learner).count() == 1, "bad input wrote nothing"


def test_turns_of_a_conversation_show_the_routing_decision(api):
    client, http = api
    learner = onboarded_learner(client)
    conversation = services.conversation_start(learner=learner)
    message, _ = services.message_receive(conversation=conversation, content="I did it")
    reply = Message.objects.create(conversation=conversation, role="coach", content="Well done!", reply_to=message)
    Turn.objects.create(learner_message=message, reply=reply, specialist="checkin", rule="report_done",
                        reason="said done", trace_id="t" * 32, outcome="ok",
                        tool_calls=[{"name": "log_checkin", "ok": True}])
    body = http.get(f"/api/v1/conversations/{conversation.public_id}/turns").json()
    assert body["count"] == 1
    turn = body["results"][0]
    # Both messages by their public ids, as the message list names them.
    assert (turn["learner_message"], turn["reply"], turn["specialist"], turn["rule"], turn["outcome"],
            turn["tools"]) == (str(message.public_id), str(reply.public_id), "checkin", "report_done", "ok",
                               ["log_checkin"])
    assert "context_snapshot" not in turn
    # A check-in the chat recorded names the learner message that reported it the same way.
    services.checkin_log(learner=learner, outcome="completed", message=message)
    checkin = http.get(f"/api/v1/learners/{learner.research_id}/checkins").json()["results"][0]
    assert checkin["message"] == str(message.public_id)


def test_another_clients_sessions_plans_checkins_and_turns_are_404(api):
    client, http = api
    _, stranger_http = make_client("stranger")
    learner = onboarded_learner(client)
    session = services.session_schedule(learner=learner, start=timezone.now() + timedelta(days=1),
                                        duration_minutes=30, topic="mine")
    conversation = services.conversation_start(learner=learner)
    for method, url, body in [
        ("get", f"/api/v1/learners/{learner.research_id}/plans", None),
        ("get", f"/api/v1/learners/{learner.research_id}/sessions", None),
        ("post", f"/api/v1/learners/{learner.research_id}/sessions",
         {"start": (timezone.now() + timedelta(days=2)).isoformat(), "duration_minutes": 30}),
        ("get", f"/api/v1/learners/{learner.research_id}/checkins", None),
        ("get", f"/api/v1/sessions/{session.public_id}", None),
        ("patch", f"/api/v1/sessions/{session.public_id}", {"topic": "theirs"}),
        ("post", f"/api/v1/sessions/{session.public_id}/checkins", {"outcome": "completed"}),
        ("get", f"/api/v1/conversations/{conversation.public_id}/turns", None),
    ]:
        response = getattr(stranger_http, method)(url, body, format="json")
        assert response.status_code == 404, (method, url, response.status_code)
        assert _error(response)["code"] == "not_found"
    session.refresh_from_db()
    assert (session.topic, session.status) == ("mine", "planned")
    assert PlannedSession.objects.count() == 1 and not CheckIn.objects.exists()
    assert http.get(f"/api/v1/sessions/{session.public_id}").status_code == 200  # the owner still can


def test_an_unknown_write_is_a_404_even_with_csrf_checks_on(api):
    """Seen in a trial: `POST /api/v1/conversations` (no such route) answered 403 "CSRF verification
    failed" to a Bearer client, since the catch-all view was not CSRF-exempt; the API test client
    does not enforce CSRF, the real server does."""
    from django.test import Client

    from core.identity.services import api_token_create

    client, _ = api
    learner = onboarded_learner(client)
    _, token = api_token_create(client=client)
    strict = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Bearer {token}")
    unknown = strict.post("/api/v1/conversations", {}, content_type="application/json")
    assert unknown.status_code == 404 and "No API route /api/v1/conversations" in _error(unknown)["message"]
    slashed = strict.post(f"/api/v1/learners/{learner.research_id}/conversations/", {},
                          content_type="application/json")
    assert slashed.status_code == 404
    assert f"/api/v1/learners/{learner.research_id}/conversations" in _error(slashed)["message"]
    assert not learner.conversations.exists()


def test_one_url_style_the_other_spelling_redirects_or_names_the_route(api):
    client, http = api
    learner = onboarded_learner(client)
    # GET with a trailing slash: a 308 to the canonical path, query string kept.
    redirected = http.get(f"/api/v1/memory/learners/{learner.research_id}/facts/?limit=5")
    assert redirected.status_code == 308
    assert redirected["Location"] == f"/api/v1/memory/learners/{learner.research_id}/facts?limit=5"
    followed = http.get(redirected["Location"])
    assert followed.status_code == 200 and followed.json()["count"] == 0
    assert http.get("/api/v1/learners/").status_code == 308
    # A write is never silently re-sent: a 404 that names the route.
    refused = http.post(f"/api/v1/learners/{learner.research_id}/conversations/", {}, format="json")
    assert refused.status_code == 404
    assert f"/api/v1/learners/{learner.research_id}/conversations" in _error(refused)["message"]
    assert not learner.conversations.exists()
    # The integer key of a learner is no route at all.
    by_pk = http.get(f"/api/v1/memory/learners/{learner.pk}/facts")
    assert by_pk.status_code == 404 and _error(by_pk)["code"] == "not_found"
    assert "UUID" in _error(by_pk)["message"]
    unknown = http.get("/api/v1/no/such/route")
    assert unknown.status_code == 404 and _error(unknown)["code"] == "not_found"


def test_every_client_facing_route_addresses_learners_by_uuid():
    from bloom.tests.reliability.test_access import api_v1_patterns

    routes = [r for r, _, _ in api_v1_patterns()]
    learner_routes = [r for r in routes if "learners/<" in r]
    assert learner_routes and all("learners/<uuid:research_id>" in r for r in learner_routes), learner_routes
    # One style: nothing under /api/v1/ ends with a slash, except the research app's routes
    # (its own URL module), which the fallback serves under both spellings.
    slashed = [r for r in routes if r.endswith("/") and not r.startswith("api/v1/research/")]
    assert slashed == []


def test_a_session_overlapping_one_already_planned_is_a_409_and_adjacent_ones_are_fine(api):
    """A learner studies one session at a time (coaching.services.plans._claim_time): the same slot
    twice counted twice as planned in the adherence export."""
    client, http = api
    learner = services.learner_create(client=client, timezone_name="UTC")
    monday = _next_monday("UTC")
    url = f"/api/v1/learners/{learner.research_id}/sessions"

    def post(start, minutes):
        return http.post(url, {"start": start.isoformat(), "duration_minutes": minutes}, format="json")

    assert post(monday, 60).status_code == 201
    for start, minutes in ((monday, 60), (monday + timedelta(minutes=30), 60), (monday - timedelta(minutes=30), 45)):
        r = post(start, minutes)
        assert r.status_code == 409 and r.json()["error"]["code"] == "session_overlap", (start, minutes, r.content)
    assert post(monday + timedelta(minutes=60), 30).status_code == 201, "one that starts as the other ends"
    assert post(monday - timedelta(minutes=30), 30).status_code == 201, "one that ends as the other starts"
    assert PlannedSession.objects.count() == 3
    moved = PlannedSession.objects.order_by("planned_start").last()
    r = http.patch(f"{url.rsplit('/learners', 1)[0]}/sessions/{moved.public_id}",
                   {"start": monday.isoformat()}, format="json")
    assert r.status_code == 409 and r.json()["error"]["code"] == "session_overlap", r.content
