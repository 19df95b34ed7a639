"""Links into the review console: the audit timeline of a conversation, and the "audit" column the
review console adds to the changelists of turns, messages, conversations, model calls and facts.

Every link resolves through the `goto` view or the conversation id, so none costs a query per row."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html


def audit_url(conversation_id: int, anchor: str = "") -> str:
    url = reverse("admin:review_conversationaudit_audit", args=[conversation_id])
    return f"{url}#{anchor}" if anchor else url


def _goto(**params) -> str:
    return f"{reverse('admin:review_conversationaudit_goto')}?{urlencode(params)}"


@admin.display(description="audit")
def trace_audit_link(obj) -> str:
    return format_html('<a href="{}">turn</a>', _goto(trace=obj.trace_id)) if obj.trace_id else "—"


@admin.display(description="audit")
def fact_audit_link(obj) -> str:
    return format_html('<a href="{}">turn</a>', _goto(fact=obj.pk)) if obj.source_message_id else "—"


@admin.display(description="audit")
def conversation_audit_link(obj) -> str:
    return format_html('<a href="{}">audit timeline</a>', audit_url(obj.pk))


@admin.display(description="audit")
def message_audit_link(obj) -> str:
    return format_html('<a href="{}">turn</a>', _goto(message=obj.pk))
