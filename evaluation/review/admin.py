"""The admin as review console.

- Conversation audits (a proxy changelist of coaching conversations) with a per-conversation audit
  timeline: message, routing, context injected, model calls, tools, guards, reply, extracted facts.
- Defect tags, created on the audit page through `services.defect_tag_create`, a weekly report by
  category × root-cause layer, and an action that freezes tagged conversations into an eval set.
- Other apps' admins, with text redaction and "audit" back-links, are declared in
  `reviewed_admins.py` and registered at the bottom of this module.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from coaching.models import Conversation, Message, Turn
from core.readonly_admin import ReadOnlyAdmin
from evaluation.review import reviewed_admins, selectors, services
from evaluation.review.charts import weekly_stacked_svg
from evaluation.review.forms import DefectTagForm
from evaluation.review.links import audit_url
from evaluation.review.models import ConversationAudit, DefectTag, DefectTagHistory, RootCauseLayer
from evaluation.review.redaction import MessageTextAdminMixin, can_view_text
from memory.models import Fact

SEND_TO_EVAL_PERMISSION = "evaluation.add_transcript"


def _tag_form_fields() -> dict[str, str]:
    form = DefectTagForm()
    # Bound-field HTML is built by the form widgets, which escape their own values.
    return {name: mark_safe(str(form[name])) for name in ("category", "layer", "note")}


@admin.register(ConversationAudit)
class ConversationAuditAdmin(ReadOnlyAdmin):
    list_display = ("id", "learner", "created_at", "turns", "defects", "audit_link")
    list_filter = ("created_at", "learner__study_arm")
    search_fields = ("=id", "learner__display_name", "=learner__research_id")
    list_select_related = ("learner",)
    show_full_result_count = False
    list_per_page = 50
    date_hierarchy = "created_at"
    ordering = ("-created_at", "-id")

    def get_queryset(self, request):
        # Counts come from the same query as the rows (no per-row COUNT).
        return super().get_queryset(request).annotate(
            n_turns=Count("messages__turn", distinct=True),
            n_defects=Count("messages__turn__defect_tags", distinct=True))

    @admin.display(description="turns", ordering="n_turns")
    def turns(self, obj) -> int:
        return obj.n_turns

    @admin.display(description="defects", ordering="n_defects")
    def defects(self, obj) -> int:
        return obj.n_defects

    @admin.display(description="audit")
    def audit_link(self, obj) -> str:
        return format_html('<a href="{}">audit timeline</a>', audit_url(obj.pk))

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path("<int:conversation_id>/audit/", view(self.audit_view), name="review_conversationaudit_audit"),
            path("<int:conversation_id>/audit/tag/", view(require_POST(self.tag_view)),
                 name="review_conversationaudit_tag"),
            path("goto/", view(self.goto_view), name="review_conversationaudit_goto"),
            *super().get_urls(),
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        # The audit timeline *is* the detail page of a conversation audit.
        try:
            return HttpResponseRedirect(audit_url(int(object_id)))
        except ValueError:
            raise Http404 from None

    def _require_view(self, request) -> None:
        if not self.has_view_permission(request):
            raise PermissionDenied

    def audit_view(self, request: HttpRequest, conversation_id: int) -> HttpResponse:
        self._require_view(request)
        try:
            data = selectors.conversation_audit(conversation_id=conversation_id)
        except Conversation.DoesNotExist:
            raise Http404(f"conversation {conversation_id} does not exist") from None
        can_tag = request.user.has_perm("review.add_defecttag")
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"Audit of conversation {conversation_id}",
            "audit": data,
            "show_text": can_view_text(request.user),
            "can_tag": can_tag,
            # The same two selects appear under every turn: render them once, not once per turn
            # (widget rendering was most of the page's time at 20 turns).
            "tag_fields": _tag_form_fields() if can_tag else None,
            "tag_url": reverse("admin:review_conversationaudit_tag", args=[conversation_id]),
            "report_url": reverse("admin:review_defecttag_report"),
            "telemetry_changelist": reverse("admin:telemetry_modelcall_changelist"),
            "fact_changelist": reverse("admin:memory_fact_changelist"),
            "tags_changelist": reverse("admin:review_defecttag_changelist"),
        }
        return TemplateResponse(request, "admin/review/conversation_audit.html", context)

    def tag_view(self, request: HttpRequest, conversation_id: int) -> HttpResponse:
        if not request.user.has_perm("review.add_defecttag"):
            raise PermissionDenied
        form = DefectTagForm(request.POST)
        if not form.is_valid():
            self.message_user(request, f"Defect not tagged: {form.errors.as_text()}", messages.ERROR)
            return HttpResponseRedirect(audit_url(conversation_id))
        turn = get_object_or_404(Turn, pk=form.cleaned_data["turn_id"],
                                 learner_message__conversation_id=conversation_id)
        tag = services.defect_tag_create(turn_id=turn.pk, category=form.cleaned_data["category"],
                                         layer=form.cleaned_data["layer"], note=form.cleaned_data["note"],
                                         tagged_by=request.user)
        self.message_user(request, f"Tagged turn {turn.pk}: {tag.get_category_display()} "
                                   f"({tag.get_layer_display()}).", messages.SUCCESS)
        return HttpResponseRedirect(audit_url(conversation_id, f"turn-{turn.pk}"))

    def goto_view(self, request: HttpRequest) -> HttpResponse:
        """Resolve ?trace=, ?message= or ?fact= to the audit page anchor of the turn they belong to;
        the telemetry and memory changelists link here so they never need a per-row query."""
        self._require_view(request)
        trace, message_id, fact_id = request.GET.get("trace"), request.GET.get("message"), request.GET.get("fact")
        try:
            if trace:
                turn = Turn.objects.select_related("learner_message").get(trace_id=trace)
                return HttpResponseRedirect(audit_url(turn.learner_message.conversation_id, f"turn-{turn.pk}"))
            if fact_id:
                message_id = str(Fact.objects.values_list("source_message_id", flat=True).get(pk=int(fact_id)) or "")
            if message_id:
                message = Message.objects.get(pk=int(message_id))
                anchor_id = message.reply_to_id if message.role != "learner" and message.reply_to_id else message.pk
                return HttpResponseRedirect(audit_url(message.conversation_id, f"message-{anchor_id}"))
        except (Turn.DoesNotExist, Message.DoesNotExist, Fact.DoesNotExist, ValueError):
            pass
        raise Http404("nothing to audit for that reference")


@admin.register(DefectTag)
class DefectTagAdmin(MessageTextAdminMixin, admin.ModelAdmin):
    list_display = ("id", "created_at", "category", "layer", "turn_link", "tagged_by", "transcript", "note")
    list_filter = ("category", "layer", "created_at", "tagged_by")
    search_fields = ("note", "=turn__trace_id")
    list_select_related = ("turn__learner_message", "tagged_by", "transcript")
    readonly_fields = ("turn", "category", "layer", "note", "tagged_by", "transcript", "created_at")
    date_hierarchy = "created_at"
    actions = ["send_to_eval_set"]
    change_list_template = "admin/review/defecttag/change_list.html"

    # Tags are created on the audit page through the service; edits would rewrite the record.
    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def lookup_allowed(self, lookup, value, request=None) -> bool:
        # The audit page links to "tags of this conversation".
        if lookup == "turn__learner_message__conversation__id__exact":
            return True
        return super().lookup_allowed(lookup, value, request)

    def delete_model(self, request, obj) -> None:
        services.defect_tag_delete(tag_id=obj.pk, actor=request.user)

    def delete_queryset(self, request, queryset) -> None:
        for pk in queryset.values_list("pk", flat=True):
            services.defect_tag_delete(tag_id=pk, actor=request.user)

    @admin.display(description="turn")
    def turn_link(self, obj: DefectTag) -> str:
        conversation_id = obj.turn.learner_message.conversation_id
        return format_html('<a href="{}">conversation {} · turn {}</a>',
                           audit_url(conversation_id, f"turn-{obj.turn_id}"), conversation_id, obj.turn_id)

    def has_send_to_eval_permission(self, request) -> bool:
        return request.user.has_perm(SEND_TO_EVAL_PERMISSION)

    @admin.action(description="Send tagged turns to an evaluation set (frozen)", permissions=["send_to_eval"])
    def send_to_eval_set(self, request, queryset) -> None:
        result = services.defect_tags_send_to_eval_set(tag_ids=list(queryset.values_list("pk", flat=True)),
                                                       actor=request.user)
        self.message_user(request, f"{result.tags} tag(s) from {result.transcripts} conversation(s) frozen into "
                                   f"evaluation set #{result.eval_set_id}.", messages.SUCCESS)

    def get_urls(self):
        return [path("report/", self.admin_site.admin_view(self.report_view), name="review_defecttag_report"),
                *super().get_urls()]

    def report_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            weeks = min(max(int(request.GET.get("weeks", 12)), 1), 104)
        except ValueError:
            weeks = 12
        report = selectors.defect_report(weeks=weeks)
        layer_labels = dict(RootCauseLayer.choices)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": "Defects by category and root-cause layer",
            "report": report,
            "weeks": weeks,
            "layers": RootCauseLayer.choices,
            "chart": mark_safe(weekly_stacked_svg(  # every label is html.escape()d in charts.py
                weeks=report.weeks, rows=report.rows, layer_labels=layer_labels)),
            "changelist": reverse("admin:review_defecttag_changelist"),
        }
        return TemplateResponse(request, "admin/review/defect_report.html", context)


@admin.register(DefectTagHistory)
class DefectTagHistoryAdmin(ReadOnlyAdmin):
    list_display = ("at", "action", "tag_pk", "actor")
    list_filter = ("action", "at")
    search_fields = ("=tag_pk",)
    list_select_related = ("actor",)
    readonly_fields = ("tag", "tag_pk", "action", "actor", "data", "at")


# Other apps' admins as the review console serves them (text redaction, audit back-links), each one
# declared in reviewed_admins.py; swapped in here, after every app's admin module was imported.
reviewed_admins.register(admin.site)

__all__ = ["ConversationAuditAdmin", "DefectTagAdmin", "DefectTagHistoryAdmin", "audit_url"]
