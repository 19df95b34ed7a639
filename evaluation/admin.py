"""Staff pages for evaluation: sets, transcripts, rubrics, runs (with a report page), replies, judge
scores and comparisons. Every admin that shows transcript or reply text redacts it for users
without the text permission (`TextGuardedAdminMixin`)."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import Count
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from evaluation.charts import bar_chart
from evaluation.models import Comparison, EvalRun, EvalSet, JudgeScore, ReplyResult, Rubric, Transcript
from evaluation.review.redaction import TextGuardedAdminMixin
from evaluation.selectors import CALIBRATION_KIND, run_report
from evaluation.services.sets import transcript_freeze_from_conversation


class TranscriptInline(admin.TabularInline):
    model = Transcript
    fields = ("position", "slug", "title", "tags")
    extra = 0
    show_change_link = True


@admin.register(EvalSet)
class EvalSetAdmin(TextGuardedAdminMixin, admin.ModelAdmin):
    list_display = ("name", "version", "transcript_count", "created_at")
    list_filter = ("name",)
    search_fields = ("name", "description")
    inlines = [TranscriptInline]

    def get_queryset(self, request):
        # One COUNT per page, not one per row.
        return super().get_queryset(request).annotate(n_transcripts=Count("transcripts"))

    @admin.display(description="transcripts", ordering="n_transcripts")
    def transcript_count(self, obj: EvalSet) -> int:
        return obj.n_transcripts


@admin.register(Transcript)
class TranscriptAdmin(TextGuardedAdminMixin, admin.ModelAdmin):
    list_display = ("slug", "title", "eval_set", "tag_list", "turn_count", "frozen_from_conversation_id")
    list_filter = ("eval_set",)
    search_fields = ("slug", "title", "expected_behaviour")
    list_select_related = ("eval_set",)

    @admin.display(description="tags")
    def tag_list(self, obj: Transcript) -> str:
        return ", ".join(obj.tags or [])

    @admin.display(description="turns")
    def turn_count(self, obj: Transcript) -> int:
        return len(obj.learner_turns or [])


@admin.register(Rubric)
class RubricAdmin(admin.ModelAdmin):
    list_display = ("version", "dimension_names", "created_at")
    list_filter = ("created_at",)
    search_fields = ("notes",)

    @admin.display(description="dimensions")
    def dimension_names(self, obj: Rubric) -> str:
        return ", ".join(obj.dimension_keys)


class ReplyInline(admin.TabularInline):
    model = ReplyResult
    fields = ("transcript", "turn_index", "reply_text", "specialist", "engine", "model_calls")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True


@admin.register(EvalRun)
class EvalRunAdmin(TextGuardedAdminMixin, admin.ModelAdmin):
    # The run's public id is what the export API, the commands and `--baseline` take.
    list_display = ("public_id", "label", "eval_set", "mode", "coach_model", "judge_model", "status", "wall_time_s",
                    "model_calls", "judge_calls", "report_link", "export_link", "created_at")
    list_filter = ("status", "mode", "eval_set")
    search_fields = ("label", "=public_id")
    list_select_related = ("eval_set",)
    readonly_fields = ("public_id", "summary", "config", "started_at", "finished_at", "wall_time_s", "model_calls",
                       "judge_calls")
    inlines = [ReplyInline]

    @admin.display(description="coach model")
    def coach_model(self, obj: EvalRun) -> str:
        return obj.config.get("model", "")

    @admin.display(description="judge model")
    def judge_model(self, obj: EvalRun) -> str:
        return obj.config.get("judge_model", "")

    @admin.display(description="report")
    def report_link(self, obj: EvalRun) -> str:
        return format_html('<a href="{}">report</a>', reverse("admin:evaluation_evalrun_report", args=[obj.pk]))

    @admin.display(description="export")
    def export_link(self, obj: EvalRun) -> str:
        return format_html('<a href="{}">JSON</a>', reverse("evaluation-run-export", args=[obj.public_id]))

    def get_urls(self):
        return [path("<int:run_id>/report/", self.admin_site.admin_view(self.report_view),
                     name="evaluation_evalrun_report"), *super().get_urls()]

    def report_view(self, request, run_id: int):
        run = get_object_or_404(EvalRun.objects.select_related("eval_set", "rubric"), pk=run_id)
        report = run_report(run=run)
        context = {
            **self.admin_site.each_context(request), "opts": self.model._meta, "run": run, "title": f"Report: {run}",
            **report,
            "check_chart": bar_chart([(r["label"], r["rate"], r["raw_rate"]) for r in report["check_rows"]],
                                     max_value=1.0),
            "dim_chart": bar_chart([(r["name"], r["mean"], None) for r in report["dim_rows"]], max_value=5.0),
        }
        return TemplateResponse(request, "admin/evaluation/run_report.html", context)


@admin.register(ReplyResult)
class ReplyResultAdmin(TextGuardedAdminMixin, admin.ModelAdmin):
    list_display = ("id", "run", "transcript", "turn_index", "specialist", "engine", "outcome", "model_calls")
    list_filter = ("run", "engine", "specialist")
    search_fields = ("reply_text", "learner_text", "trace_id")
    list_select_related = ("run", "transcript")


@admin.register(JudgeScore)
class JudgeScoreAdmin(TextGuardedAdminMixin, admin.ModelAdmin):
    list_display = ("id", "reply", "dimension", "order", "repeat_index", "score", "invalid", "attempts")
    list_filter = ("dimension", "invalid", "order")
    search_fields = ("reason",)
    list_select_related = ("reply__transcript",)


@admin.register(Comparison)
class ComparisonAdmin(admin.ModelAdmin):
    list_display = ("id", "baseline", "candidate", "verdict", "created_at")
    list_filter = ("verdict",)
    search_fields = ("=baseline__public_id", "=candidate__public_id")  # runs by the id they show
    list_select_related = ("baseline", "candidate")
    readonly_fields = ("deltas", "reasons", "thresholds")


def add_conversations_to_eval_set(modeladmin, request, queryset) -> None:
    """Admin action for coaching Conversations: freeze each selected conversation into the newest
    eval set (offered on the review console's Conversation admin, `evaluation.review.reviewed_admins`)."""
    # The calibration set holds hand-scored replies, not conversations to replay.
    eval_set = EvalSet.objects.exclude(runs__config__kind=CALIBRATION_KIND).order_by("-created_at").first()
    if eval_set is None:
        modeladmin.message_user(request, "No eval set exists yet (run `manage.py load_eval_set`).", messages.ERROR)
        return
    for conversation in queryset:
        transcript_freeze_from_conversation(conversation_id=conversation.pk, eval_set_id=eval_set.pk)
    modeladmin.message_user(request, f"Added {queryset.count()} conversation(s) to {eval_set}, frozen as they are.")


add_conversations_to_eval_set.short_description = "Add to evaluation set (frozen)"
