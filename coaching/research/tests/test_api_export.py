"""Staff export endpoint: permission, streaming, logging, Parquet, codebook, error shape."""

from __future__ import annotations

import asyncio
import csv
import datetime as dt
import io
import uuid

import pytest
from django.contrib.auth.models import Permission, User
from django.http import StreamingHttpResponse
from django.urls import reverse
from django.utils import timezone

from coaching.research import services
from coaching.research.codebook import COLUMN_NAMES, codebook_csv, codebook_markdown
from coaching.research.export import as_async_iterator
from coaching.research.models import ExportLog
from coaching.research.tests import factories as f
from coaching.research.tests.factories import INTENDED_USE

pytestmark = pytest.mark.django_db


TIMEZONES = ("Europe/Berlin", "America/New_York", "UTC")


def _rows_so_far(study) -> int:
    """One row per participant and study week begun in the participant's own time zone: around
    midnight UTC from Sunday to Monday, Berlin is a week ahead of New York."""
    from zoneinfo import ZoneInfo

    return sum((timezone.now().astimezone(ZoneInfo(tz)).date() - study.start_date).days // 7 + 1
               for tz in TIMEZONES)


@pytest.fixture
def study():
    # Weeks are ISO weeks: the study starts on the Monday three weeks back and everyone enrols that
    # Monday at noon UTC, so the enrolment is in study week 1 whatever weekday today is (a Sunday
    # start with a Monday enrolment put the enrolment in week 2).
    day = (timezone.now() - dt.timedelta(days=21)).date()
    start = day - dt.timedelta(days=day.weekday())
    study = services.study_create(**INTENDED_USE, name="api", start_date=start, duration_weeks=6, cohort="c1")
    enrolled_at = dt.datetime.combine(start, dt.time(12), tzinfo=dt.UTC)
    api_client = f.client()
    for i, tz in enumerate(TIMEZONES):
        learner = f.learner(api_client, tz=tz, name=f"Person {i}")
        services.enrollment_create(study=study, learner=learner, enrolled_at=enrolled_at)
        f.session(learner, timezone.now() - dt.timedelta(days=3), status="completed")
    return study


def _user(username: str, *, staff: bool, perm: bool) -> User:
    user = User.objects.create_user(username=username, password="x" * 12, is_staff=staff)
    if perm:
        user.user_permissions.add(Permission.objects.get(codename="export_research_data"))
    return User.objects.get(pk=user.pk)  # drop the permission cache


def _url(study, fmt="csv"):
    return reverse("research-study-export", args=[study.public_id]) + f"?format={fmt}"


@pytest.mark.parametrize(
    ("staff", "perm"), [(True, False), (False, True), (False, False)],
)
def test_export_forbidden_without_staff_and_permission(client, study, staff, perm):
    client.force_login(_user("u", staff=staff, perm=perm))
    response = client.get(_url(study))
    assert response.status_code == 403
    body = response.json()
    assert set(body["error"]) == {"code", "message", "field", "errors"}
    assert not ExportLog.objects.exists()


def test_export_anonymous_is_rejected(client, study):
    response = client.get(_url(study))
    assert response.status_code in (401, 403)
    assert "error" in response.json()


def test_export_streams_csv_and_logs_row_count(client, study):
    user = _user("researcher", staff=True, perm=True)
    client.force_login(user)
    response = client.get(_url(study))
    assert response.status_code == 200
    assert isinstance(response, StreamingHttpResponse)
    assert response["Content-Type"].startswith("text/csv")
    # The file is named by the study's public id, never its integer key.
    assert f'filename="bloom-adherence-study-{study.public_id}-' in response["Content-Disposition"]
    log = ExportLog.objects.get()
    assert log.row_count is None  # nothing produced yet: the body is lazy
    text = b"".join(response.streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == COLUMN_NAMES
    assert {r["cohort"] for r in rows} == {"c1"}
    assert len(rows) == _rows_so_far(study) and 11 <= len(rows) <= 13  # three participants, weeks 1..4 (±1) so far
    log.refresh_from_db()
    assert (log.user_id, log.study_id, log.via, log.format, log.row_count) == (user.pk, study.pk, "api", "csv",
                                                                               len(rows))
    assert log.finished_at is not None


def test_export_parquet(client, study):
    pq = pytest.importorskip("pyarrow.parquet")
    client.force_login(_user("researcher", staff=True, perm=True))
    response = client.get(_url(study, "parquet"))
    assert response.status_code == 200
    table = pq.read_table(io.BytesIO(b"".join(response.streaming_content)))
    assert table.column_names == COLUMN_NAMES
    assert table.num_rows == _rows_so_far(study)
    assert ExportLog.objects.get().row_count == table.num_rows
    ratios = table.column("adherence_ratio").to_pylist()
    assert None in ratios and 1.0 in ratios  # NA stays null in Parquet


def test_export_bad_format_and_missing_study(client, study):
    client.force_login(_user("researcher", staff=True, perm=True))
    bad = client.get(_url(study, "xlsx"))
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "format"
    missing = client.get(reverse("research-study-export", args=[uuid.uuid4()]))
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    # The integer key is no route: the same 404, in the same shape, that client routes give.
    by_key = client.get(f"/api/v1/research/studies/{study.pk}/export?format=csv")
    error = by_key.json()["error"]
    assert by_key.status_code == 404 and error["code"] == "not_found" and "UUID" in error["message"], error


def test_codebook_describes_every_column(client):
    client.force_login(_user("staff", staff=True, perm=False))
    text = client.get(reverse("research-codebook")).content.decode()
    for name in COLUMN_NAMES:
        assert f"`{name}`" in text
    assert codebook_markdown() == text
    assert [r["column"] for r in csv.DictReader(io.StringIO(codebook_csv()))] == COLUMN_NAMES


def test_async_wrapper_yields_each_chunk_in_order():
    chunks = iter(["a", "b", "c"])

    async def collect():
        return [c async for c in as_async_iterator(chunks)]

    assert asyncio.run(collect()) == ["a", "b", "c"]


def test_asgi_request_gets_async_streaming_body(study):
    from django.core.handlers.asgi import ASGIRequest

    from coaching.research.api.views import export_response

    scope = {"type": "http", "method": "GET", "path": "/x", "query_string": b"", "headers": []}
    request = ASGIRequest(scope, io.BytesIO())
    request.user = _user("researcher", staff=True, perm=True)
    response = export_response(request=request, study=study, fmt="csv", via="api")
    assert response.is_async  # Django would otherwise buffer the whole body under ASGI


def test_export_can_leave_out_incomplete_weeks(client, study):
    client.force_login(_user("researcher", staff=True, perm=True))
    full = list(csv.DictReader(io.StringIO(b"".join(client.get(_url(study)).streaming_content).decode())))
    complete = list(csv.DictReader(io.StringIO(b"".join(
        client.get(_url(study) + "&complete_weeks_only=true").streaming_content).decode())))
    assert {r["week_complete"] for r in full} == {"true", "false"}  # the current week is partial
    # Only the current week of each of the three participants is left out.
    assert complete == [r for r in full if r["week_complete"] == "true"] and len(complete) == len(full) - 3


def test_codebook_for_an_unknown_study_is_a_404(client, study):
    client.force_login(_user("staff", staff=True, perm=False))
    response = client.get(reverse("research-codebook") + f"?study={uuid.uuid4()}")
    assert response.status_code == 404 and response.json()["error"]["field"] == "study"
    # The study's integer key is not its id either.
    response = client.get(reverse("research-codebook") + f"?study={study.pk}")
    error = response.json()["error"]
    assert response.status_code == 404 and error["field"] == "study" and "UUID" in error["message"]
