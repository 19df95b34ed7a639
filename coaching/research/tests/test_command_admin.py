"""Management command, admin dashboard and admin export action."""

from __future__ import annotations

import csv
import datetime as dt

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from django.urls import reverse

from coaching.research import services
from coaching.research.export import COLUMN_NAMES
from coaching.research.models import ExportLog
from coaching.research.simulation import simulate

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    study = services.study_create(name="cmd", start_date=dt.date(2026, 3, 2), duration_weeks=4, cohort="k")
    simulate(study=study, n_learners=12, seed=7)
    return study


def test_command_writes_csv_codebook_and_log(study, tmp_path):
    out = tmp_path / "export.csv"
    call_command("export_adherence", "--study", str(study.pk), "--out", str(out), "--no-progress")
    with out.open() as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == COLUMN_NAMES and len(rows) > 12
    assert (tmp_path / "export.csv.codebook.md").read_text().count("| `") == len(COLUMN_NAMES)
    log = ExportLog.objects.get()
    assert (log.via, log.format, log.row_count, log.user_id) == ("command", "csv", len(rows), None)


def test_command_parquet_by_study_name(study, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "export.parquet"
    call_command("export_adherence", "--study", "cmd", "--format", "parquet", "--out", str(out), "--no-progress")
    table = pq.read_table(out)
    assert table.column_names == COLUMN_NAMES
    assert ExportLog.objects.get().row_count == table.num_rows > 0


def test_dashboard_renders_svg_chart_and_counts(client, study):
    from coaching.research.models import Enrollment

    Enrollment.objects.filter(pk=Enrollment.objects.filter(withdrawn_at__isnull=True).first().pk).update(
        withdrawn_at=dt.datetime(2026, 3, 20, tzinfo=dt.UTC))
    withdrawn = Enrollment.objects.filter(study=study, withdrawn_at__isnull=False).count()
    assert withdrawn >= 1
    client.force_login(User.objects.create_superuser("admin", password="x" * 12))
    response = client.get(reverse("admin:research_study_dashboard", args=[study.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "<svg" in html and "<polyline" in html and "cdn" not in html.lower()
    assert response.context["totals"] == {"enrolled": 12, "withdrawn": withdrawn, "active": 12 - withdrawn}
    weekly = response.context["weekly"]
    assert {row.arm for row in weekly} == {"coach", "tracker"}
    assert {row.study_week for row in weekly} == {1, 2, 3, 4}
    # Both summaries per arm, and the all-weeks row is the sum of the weekly ones.
    totals = {row.arm: row for row in response.context["arm_totals"]}
    for arm, total in totals.items():
        assert total.planned_sessions == sum(r.planned_sessions for r in weekly if r.arm == arm)
        assert total.pooled_ratio == total.completed_sessions / total.planned_sessions
    assert "pooled ratio" in html and "mean of ratios" in html
    assert study.secret not in html
    changelist = client.get(reverse("admin:research_study_changelist")).content.decode()
    assert study.secret not in changelist


def test_admin_action_requires_export_permission(client, study):
    staff = User.objects.create_user("staff", password="x" * 12, is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="view_study"),
                               Permission.objects.get(codename="change_study"))
    client.force_login(staff)
    url = reverse("admin:research_study_changelist")
    data = {"action": "export_csv", "_selected_action": [study.pk]}
    assert client.post(url, data).status_code == 403
    staff.user_permissions.add(Permission.objects.get(codename="export_research_data"))
    client.force_login(User.objects.get(pk=staff.pk))
    response = client.post(url, data)
    assert response.status_code == 200
    text = b"".join(response.streaming_content).decode()
    assert text.splitlines()[0].split(",") == COLUMN_NAMES
    log = ExportLog.objects.get()
    assert (log.via, log.user_id, log.row_count) == ("admin", staff.pk, len(text.splitlines()) - 1)
