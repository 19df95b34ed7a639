"""Admin: studies (secret never listed or shown), enrolments, feeds, reminders, export logs, the
per-study dashboard (adherence by arm as server-rendered SVG) and the export admin action."""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from coaching.models import SessionStatusChange
from coaching.research import adherence, selectors, services
from coaching.research.api.permissions import EXPORT_PERMISSION
from coaching.research.charts import line_chart_svg
from coaching.research.codebook import (
    COLUMNS,
    SUMMARY_COLUMNS_DOC,
    SUMMARY_NOTE,
    TYPES,
    dates_statement,
    outcome_statement,
    reading_instructions,
)
from coaching.research.conf import EXPORT_SCHEMA_VERSION, missed_grace_minutes
from coaching.research.models import (
    CalendarFeed,
    Enrollment,
    EnrollmentEvent,
    ExportLog,
    ReminderDelivery,
    Study,
)
from core.readonly_admin import ReadOnlyAdmin


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    # The public id is what the export API (`/api/v1/research/studies/<id>/export`) takes.
    list_display = ["name", "public_id", "cohort", "start_date", "duration_weeks", "arms", "date_shift_enabled",
                    "dashboard_link", "codebook_link"]
    list_filter = ["date_shift_enabled", "start_date"]
    search_fields = ["name", "cohort"]
    # `secret` is not editable=True on the model, so it never appears in forms or lists.
    fields = ["name", "public_id", "cohort", "arms", "start_date", "duration_weeks", "intended_sessions_per_week",
              "intended_use", "date_shift_enabled"]

    def get_readonly_fields(self, request, obj=None) -> list[str]:
        # The intended use is pre-registered: stated at creation, fixed once the study exists.
        return ["public_id"] if obj is None else ["public_id", "intended_sessions_per_week", "intended_use"]
    actions = ["export_csv"]

    @admin.display(description="dashboard")
    def dashboard_link(self, obj: Study) -> str:
        return format_html('<a href="{}">dashboard</a>', reverse("admin:research_study_dashboard", args=[obj.pk]))

    @admin.display(description="data dictionary")
    def codebook_link(self, obj: Study) -> str:
        return format_html('<a href="{}">codebook</a>', reverse("admin:research_study_codebook", args=[obj.pk]))

    def get_urls(self):
        custom = [
            path("<int:pk>/dashboard/", self.admin_site.admin_view(self.dashboard_view),
                 name="research_study_dashboard"),
            path("<int:pk>/codebook/", self.admin_site.admin_view(self.codebook_view),
                 name="research_study_codebook"),
        ]
        return custom + super().get_urls()

    def codebook_view(self, request, pk: int):
        """The data dictionary: the same column list, types and conventions the export's codebook
        file holds, with this study's statement on date shifting."""
        study = self.get_object(request, str(pk))
        if study is None or not self.has_view_permission(request, study):
            raise PermissionDenied
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"{study.name}: data dictionary (schema {EXPORT_SCHEMA_VERSION})",
            "study": study,
            "columns": [{"column": c, "formats": TYPES[c.type]} for c in COLUMNS],
            "dates_statement": dates_statement(study),
            "outcome_statement": outcome_statement(study),
            "summary_columns": SUMMARY_COLUMNS_DOC,
            "reading": reading_instructions(),
            "summary_note": SUMMARY_NOTE,
            "grace_minutes": missed_grace_minutes(),
        }
        return TemplateResponse(request, "admin/research/codebook.html", context)

    def dashboard_view(self, request, pk: int):
        study = self.get_object(request, str(pk))
        if study is None or not self.has_view_permission(request, study):
            raise PermissionDenied
        weekly, arm_totals = adherence.adherence_by_arm(study=study)
        series: dict[str, dict[int, float | None]] = {arm: {} for arm in study.arms}
        for row in weekly:
            series.setdefault(row.arm, {})[row.study_week] = row.mean_protocol_adherence
        counts = selectors.study_enrollment_counts(study)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"{study.name}: adherence dashboard",
            "study": study,
            "chart": mark_safe(line_chart_svg(series, n_weeks=study.duration_weeks)),
            "weekly": weekly,
            "arm_totals": arm_totals,
            "counts": counts,
            "totals": {k: sum(c[k] for c in counts.values()) for k in ("enrolled", "withdrawn", "active")},
            "can_export": request.user.has_perm(EXPORT_PERMISSION),
        }
        return TemplateResponse(request, "admin/research/study_dashboard.html", context)

    @admin.action(description="Export adherence (CSV, one study)")
    def export_csv(self, request, queryset):
        if not request.user.has_perm(EXPORT_PERMISSION):
            raise PermissionDenied
        if queryset.count() != 1:
            self.message_user(request, "Select exactly one study to export.", level=messages.WARNING)
            return None
        from coaching.research.api.views import export_response

        return export_response(request=request, study=queryset.get(), fmt="csv", via="admin")


@admin.register(Enrollment)
class EnrollmentAdmin(admin.ModelAdmin):
    """Read-only rows: enrolment state has one writer each (services.enrolment: enrol, the arm at
    the study's start, withdraw), audited as EnrollmentEvent. Staff withdraw through the action;
    editing withdrawn_at by hand (clearing it left two enrolments in force) is not possible."""

    list_display = ["id", "study", "learner", "arm", "stratum", "enrolled_at", "withdrawn_at"]
    list_filter = ["study", "arm", "stratum"]
    search_fields = ["=learner__research_id", "=research_id", "stratum"]
    list_select_related = ["study", "learner"]
    actions = ["withdraw"]

    def get_readonly_fields(self, request, obj=None) -> list[str]:
        return [f.name for f in Enrollment._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False  # enrolment randomises: services.enrollment_create (API or command), never a form

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # intention to treat: every randomised participant stays

    @admin.action(description="Withdraw the selected participants (now)")
    def withdraw(self, request, queryset):
        done = 0
        for enrollment in queryset.filter(withdrawn_at__isnull=True):
            services.enrollment_withdraw(enrollment=enrollment, reason=f"admin: {request.user.get_username()}")
            done += 1
        self.message_user(request, f"{done} participant(s) withdrawn.")


@admin.register(EnrollmentEvent)
class EnrollmentEventAdmin(ReadOnlyAdmin):
    """The enrolment audit trail, written only by coaching.research.services.enrolment."""

    list_display = ["enrollment", "kind", "detail", "at"]
    list_filter = ["kind"]
    search_fields = ["=enrollment__research_id", "=enrollment__study__name"]
    list_select_related = ["enrollment"]


@admin.register(CalendarFeed)
class CalendarFeedAdmin(admin.ModelAdmin):
    list_display = ["learner", "created_at", "revoked_at", "subscription_confirmed_at", "last_fetched_at"]
    list_filter = [("revoked_at", admin.EmptyFieldListFilter),
                   ("subscription_confirmed_at", admin.EmptyFieldListFilter)]
    search_fields = ["=learner__research_id"]
    list_select_related = ["learner"]
    exclude = ["token_hash"]
    readonly_fields = ["learner", "created_at", "last_fetched_at"]


@admin.register(ReminderDelivery)
class ReminderDeliveryAdmin(admin.ModelAdmin):
    list_display = ["learner", "slot", "channel", "status", "sent_at", "error"]
    list_filter = ["channel", "status"]
    search_fields = ["slot", "=learner__research_id"]
    list_select_related = ["learner"]
    raw_id_fields = ["learner", "message"]


@admin.register(SessionStatusChange)
class SessionStatusChangeAdmin(ReadOnlyAdmin):
    """The audit trail is written only by coaching.services.session_status; staff read it."""

    list_display = ["session", "from_status", "to_status", "source", "changed_at"]
    list_filter = ["source", "to_status"]
    search_fields = ["=session__id", "detail"]
    list_select_related = ["session"]
    raw_id_fields = ["session"]


@admin.register(ExportLog)
class ExportLogAdmin(admin.ModelAdmin):
    list_display = ["started_at", "study", "user", "via", "format", "row_count", "schema_version", "finished_at"]
    list_filter = ["study", "via", "format"]
    search_fields = ["study__name", "user__username"]
    list_select_related = ["study", "user"]

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # an audit log is not edited

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
