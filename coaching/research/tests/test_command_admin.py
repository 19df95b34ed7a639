"""Management command, admin dashboard and admin export action."""

from __future__ import annotations

import csv
import datetime as dt

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from django.urls import reverse

from coaching.research import services
from coaching.research.codebook import COLUMN_NAMES
from coaching.research.export import SUMMARY_COLUMNS
from coaching.research.models import ExportLog
from coaching.research.simulation import simulate
from coaching.research.tests.factories import INTENDED_USE

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    study = services.study_create(**INTENDED_USE,
                                  name="cmd", start_date=dt.date(2026, 3, 2), duration_weeks=4, cohort="k")
    simulate(study=study, n_learners=12, seed=7)
    return study


def test_command_writes_csv_codebook_and_log(study, tmp_path):
    out = tmp_path / "export.csv"
    call_command("export_adherence", "--study", str(study.public_id), "--out", str(out), "--no-progress")
    with out.open() as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == COLUMN_NAMES and len(rows) > 12
    # Every column of both files (the export and its summary) has its row in the codebook.
    assert (tmp_path / "export.csv.codebook.md").read_text().count("| `") == len(COLUMN_NAMES) + len(SUMMARY_COLUMNS)
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
    assert "pooled ratio" in html and "mean of ratios" in html and "mean protocol adherence" in html
    for arm, total in totals.items():  # the primary outcome weighs every participant-week, planned or not
        weeks = [r for r in weekly if r.arm == arm]
        assert total.participant_weeks == sum(r.participant_weeks for r in weeks)
        assert total.mean_protocol_adherence == pytest.approx(
            sum(r.mean_protocol_adherence * r.participant_weeks for r in weeks) / total.participant_weeks)
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


def test_validate_accepts_the_written_file_and_catches_each_kind_of_drift(study, tmp_path):
    """--validate re-reads the file. A copy with a literal NA, a 0/1 boolean, a float schema
    version, a broken identity or a per-participant date offset is refused, line by line."""
    from coaching.research.validate import validate_export

    out = tmp_path / "export.csv"
    call_command("export_adherence", "--study", str(study.public_id), "--out", str(out), "--no-progress", "--validate")
    report = validate_export(out, "csv", duration_weeks=4)
    assert report.ok and report.rows > 12

    rows = list(csv.DictReader(out.open()))
    planned_row = next(i for i, r in enumerate(rows) if int(r["planned_sessions"]) > 0)
    second = next(i for i, r in enumerate(rows) if r["participant_id"] != rows[0]["participant_id"])
    drifts = {
        "adherence_ratio": ("NA", "expected a decimal number"),
        "adherent": ("1", "expected true or false"),
        "schema_version": ("1.0", "expected an integer"),
        "missed_sessions": (str(int(rows[planned_row]["missed_sessions"]) + 1), "completed + skipped + missed"),
        "arm": ("", "never missing"),
    }
    for column, (value, message) in drifts.items():
        broken = [dict(r) for r in rows]
        broken[planned_row][column] = value
        path = tmp_path / f"broken-{column}.csv"
        with path.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=COLUMN_NAMES, lineterminator="\n")
            writer.writeheader()
            writer.writerows(broken)
        report = validate_export(path, "csv", duration_weeks=4)
        assert not report.ok and any(message in p for p in report.problems), (column, report.problems)
    shifted = [dict(r) for r in rows]
    for r in shifted[second:]:
        if r["participant_id"] == rows[second]["participant_id"]:
            r["week_start"] = (dt.date.fromisoformat(r["week_start"]) + dt.timedelta(weeks=3)).isoformat()
    path = tmp_path / "per-participant-shift.csv"
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMN_NAMES, lineterminator="\n")
        writer.writeheader()
        writer.writerows(shifted)
    assert any("one calendar" in p for p in validate_export(path, "csv").problems)


def test_validate_failure_exits_non_zero(study, tmp_path, monkeypatch):
    from django.core.management.base import CommandError

    from coaching.research import export

    old_convention = [(name, lambda v, fmt=fmt: "NA" if v is None else fmt(v)) for name, fmt in export._FORMATTERS]
    monkeypatch.setattr(export, "_FORMATTERS", old_convention)
    with pytest.raises(CommandError, match="validation failed") as failed:
        call_command("export_adherence", "--study", str(study.public_id), "--out", str(tmp_path / "x.csv"),
                     "--no-progress", "--validate")
    assert failed.value.returncode == 1


def test_summary_file_has_pooled_and_mean_of_ratios_per_arm(study, tmp_path):
    out = tmp_path / "export.csv"
    call_command("export_adherence", "--study", str(study.public_id), "--out", str(out), "--no-progress")
    rows = list(csv.DictReader(out.open()))
    summary = list(csv.DictReader((tmp_path / "export.csv.summary.csv").open()))
    for arm in ("coach", "tracker"):
        mine = [r for r in rows if r["arm"] == arm]
        ratios = [float(r["adherence_ratio"]) for r in mine if r["adherence_ratio"]]
        planned = sum(int(r["planned_sessions"]) for r in mine)
        completed = sum(int(r["completed_sessions"]) for r in mine)
        total = next(s for s in summary if s["arm"] == arm and s["study_week"] == "")
        assert int(total["participant_weeks"]) == len(mine) and int(total["planned_sessions"]) == planned
        assert float(total["pooled_ratio"]) == pytest.approx(completed / planned, abs=5e-5)
        # Both sides rounded to 4 decimals (each row, and the summary): within 1e-4.
        assert float(total["mean_ratio"]) == pytest.approx(sum(ratios) / len(ratios), abs=1e-4)
        weeks = [s for s in summary if s["arm"] == arm and s["study_week"]]
        assert sum(int(s["participant_weeks"]) for s in weeks) == len(mine)


def test_data_dictionary_page_renders_the_codebook_with_the_dates_statement(client, study):
    from coaching.research.codebook import COLUMNS

    client.force_login(User.objects.create_superuser("admin", password="x" * 12))
    html = client.get(reverse("admin:research_study_codebook", args=[study.pk])).content.decode()
    for column in COLUMNS:
        assert f"<code>{column.name}</code>" in html
    assert "Dates: not shifted" in html and "an empty cell in CSV, null in Parquet" in html
    study.date_shift_enabled = True
    study.save()
    html = client.get(reverse("admin:research_study_codebook", args=[study.pk])).content.decode()
    assert "Dates: shifted" in html and study.secret not in html
    api = client.get(reverse("research-codebook") + f"?study={study.public_id}").content.decode()
    assert "Dates: shifted" in api
