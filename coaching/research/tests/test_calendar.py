from __future__ import annotations

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone
from icalendar import Calendar, Event

from coaching.models import SessionStatusChange
from coaching.research import services
from coaching.research.selectors import calendar_subscription_confirmed
from coaching.research.tests import factories as f
from core.errors import ApplicationError

pytestmark = pytest.mark.django_db


def _feed_url(raw: str) -> str:
    return reverse("research-calendar-feed", kwargs={"token": raw})


def test_feed_serves_planned_sessions_by_token_only(client):
    learner = f.learner(f.client(), tz="Europe/Berlin")
    soon = timezone.now() + dt.timedelta(days=1)
    s1 = f.session(learner, soon, minutes=40, topic="verbs")
    other = f.learner(f.client("b"))
    f.session(other, soon, topic="someone else's")
    feed, raw = services.calendar_feed_create(learner=learner)
    assert feed.token_hash != raw and len(raw) >= 40  # only the hash is stored
    response = client.get(_feed_url(raw))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/calendar")
    cal = Calendar.from_ical(response.content)
    events = list(cal.walk("VEVENT"))
    assert [str(e["UID"]) for e in events] == [f"session-{s1.public_id}@bloom"]  # no database key
    assert events[0].decoded("DTEND") - events[0].decoded("DTSTART") == dt.timedelta(minutes=40)
    feed.refresh_from_db()
    assert feed.last_fetched_at is not None

    assert client.get(_feed_url("not-a-token")).status_code == 404
    _, new_raw = services.calendar_feed_create(learner=learner)  # rotation revokes the old URL
    assert client.get(_feed_url(raw)).status_code == 404
    assert client.get(_feed_url(new_raw)).status_code == 200


def test_in_your_calendar_needs_feed_and_confirmation():
    learner = f.learner(f.client())
    assert calendar_subscription_confirmed(learner.id) is False
    with pytest.raises(ApplicationError):
        services.calendar_subscription_confirm(learner=learner)
    services.calendar_feed_create(learner=learner)
    assert calendar_subscription_confirmed(learner.id) is False  # a feed alone is not a subscription
    services.calendar_subscription_confirm(learner=learner)
    assert calendar_subscription_confirmed(learner.id) is True
    services.calendar_feed_create(learner=learner)  # rotated: the new URL is not subscribed yet
    assert calendar_subscription_confirmed(learner.id) is False


def _ics(*events: dict) -> bytes:
    cal = Calendar()
    cal.add("prodid", "-//test//EN")
    cal.add("version", "2.0")
    for spec in events:
        event = Event()
        for key, value in spec.items():
            event.add(key, value)
        cal.add_component(event)
    return cal.to_ical()


def test_import_marks_completed_by_uid_only_never_by_a_time_match():
    learner = f.learner(f.client(), tz="America/New_York")
    base = timezone.now() - dt.timedelta(days=2)
    by_uid = f.session(learner, base, minutes=30)
    by_time = f.session(learner, base + dt.timedelta(hours=6), minutes=30)
    far = f.session(learner, base + dt.timedelta(hours=12), minutes=30)
    self_reported = f.session(learner, base + dt.timedelta(hours=18), status="completed")
    future = f.session(learner, timezone.now() + dt.timedelta(hours=3))
    ics = _ics(
        {"uid": f"session-{by_uid.public_id}@bloom", "dtstart": base, "dtend": base + dt.timedelta(minutes=30)},
        {"uid": "abc@google", "dtstart": base + dt.timedelta(hours=6, minutes=20),
         "dtend": base + dt.timedelta(hours=7)},
        {"uid": "x@y", "dtstart": base + dt.timedelta(hours=14), "dtend": base + dt.timedelta(hours=15)},
        # A UID of a feed exported before sessions had public ids (the key form) still matches.
        {"uid": f"session-{self_reported.pk}@bloom", "dtstart": base + dt.timedelta(hours=18),
         "dtend": base + dt.timedelta(hours=19)},
        {"uid": f"session-{future.pk}@bloom", "dtstart": future.planned_start,
         "dtend": future.planned_start + dt.timedelta(minutes=30)},
        {"uid": "cancelled@y", "dtstart": base + dt.timedelta(hours=12), "dtend": base + dt.timedelta(hours=13),
         "status": "CANCELLED"},
    )
    result = services.calendar_import(learner=learner, ics=ics)
    # The event 20 minutes after `by_time` carries no session UID: a time match is not evidence.
    assert (result.matched_uid, result.unmatched, result.not_ended, result.already_done, result.bloom_feed) == (
        2, 2, 1, 1, 0)
    for s in (by_uid, by_time, far, self_reported, future):
        s.refresh_from_db()
    assert (by_uid.status, by_uid.completion_source) == ("completed", "calendar")
    assert (by_time.status, by_time.completion_source) == ("planned", "")
    assert far.status == "planned" and future.status == "planned"
    assert self_reported.completion_source == "self_report"  # the learner's report wins
    assert SessionStatusChange.objects.filter(source="calendar").count() == 1
    # Idempotent: importing the same file again changes nothing.
    again = services.calendar_import(learner=learner, ics=ics)
    assert again.session_ids == [] and SessionStatusChange.objects.count() == 1


def test_import_cannot_touch_another_learners_session():
    mine, theirs = f.learner(f.client()), f.learner(f.client("b"))
    start = timezone.now() - dt.timedelta(days=1)
    other = f.session(theirs, start)
    result = services.calendar_import(learner=mine, ics=_ics(
        {"uid": f"session-{other.public_id}@bloom", "dtstart": start, "dtend": start + dt.timedelta(minutes=30)},
        {"uid": f"session-{other.pk}@bloom", "dtstart": start, "dtend": start + dt.timedelta(minutes=30)}))
    other.refresh_from_db()
    assert other.status == "planned" and result.unmatched == 2


def test_invalid_ics_is_a_domain_error():
    with pytest.raises(ApplicationError) as err:
        services.calendar_import(learner=f.learner(f.client()), ics=b"this is not ics")
    assert err.value.code == "invalid_ics"


def test_calendar_api_for_staff_session(client):
    from django.contrib.auth.models import User

    learner = f.learner(f.client())
    client.force_login(User.objects.create_user("s", password="x" * 12, is_staff=True))
    created = client.post(reverse("research-calendar", args=[learner.research_id]))
    assert created.status_code == 201
    url = created.json()["url"]
    assert url.endswith(".ics") and created.json()["subscription_confirmed"] is False
    assert client.get(url.split("testserver", 1)[1]).status_code == 200
    confirmed = client.post(reverse("research-calendar-confirm", args=[learner.research_id]))
    assert confirmed.json()["subscription_confirmed"] is True and confirmed.json()["url"] == ""
    assert calendar_subscription_confirmed(learner.id)


def test_calendar_api_rejects_non_staff_user(client):
    from django.contrib.auth.models import User

    learner = f.learner(f.client())
    client.force_login(User.objects.create_user("n", password="x" * 12))
    assert client.post(reverse("research-calendar", args=[learner.research_id])).status_code == 404


def test_calendar_api_with_client_bearer_token_is_scoped_to_its_learners(client):
    from coaching.models import ApiToken

    mine_client, other_client = f.client("mine"), f.client("other")
    raw = ApiToken.generate_raw()
    from coaching.models import hash_token

    ApiToken.objects.create(client=mine_client, prefix=raw[:10], key_hash=hash_token(raw))
    mine, theirs = f.learner(mine_client), f.learner(other_client)
    auth = {"HTTP_AUTHORIZATION": f"Bearer {raw}"}
    assert client.post(reverse("research-calendar", args=[mine.research_id]), **auth).status_code == 201
    assert client.post(reverse("research-calendar", args=[theirs.research_id]), **auth).status_code == 404
    start = timezone.now() - dt.timedelta(days=1)
    session = f.session(mine, start)
    ics = _ics({"uid": f"session-{session.pk}@bloom", "dtstart": start, "dtend": start + dt.timedelta(minutes=30)})
    response = client.post(reverse("research-calendar-import", args=[mine.research_id]),
                           {"ics": ics.decode()}, content_type="application/json", **auth)
    assert response.status_code == 200 and response.json()["session_ids"] == [str(session.public_id)]
    bad = client.post(reverse("research-calendar-import", args=[mine.research_id]),
                      {"ics": "garbage"}, content_type="application/json", **auth)
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_ics"


def test_a_missed_session_completed_by_the_calendar_has_one_audit_row_per_change():
    learner = f.learner(f.client())
    start = (timezone.now() - dt.timedelta(days=1)).replace(microsecond=0)  # iCalendar keeps whole seconds
    session = f.session(learner, start, minutes=30)
    assert services.sessions_mark_missed() == 1
    ics = _ics({"uid": f"session-{session.pk}@bloom", "dtstart": start, "dtend": start + dt.timedelta(minutes=30)})
    assert services.calendar_import(learner=learner, ics=ics).session_ids == [session.public_id]
    session.refresh_from_db()
    assert (session.status, session.completion_source) == ("completed", "calendar")
    assert session.completed_at == start + dt.timedelta(minutes=30)  # the event's end
    changes = SessionStatusChange.objects.filter(session=session).order_by("pk")
    assert [(c.from_status, c.to_status, c.source) for c in changes] == [
        ("planned", "missed", "missed_task"), ("missed", "completed", "calendar")]
    assert changes[1].detail == f"ics uid=session-{session.pk}@bloom"
