"""Other apps' admins as the review console serves them, declared here one by one.

Coaching, memory and telemetry may not import evaluation code, so they cannot apply the review
console's text redaction or link to its audit timeline themselves. Each class below extends one of
their admins with `TextGuardedAdminMixin` (text hidden from users without the text permission,
custom views guarded) and, where a row belongs to a turn, an "audit" column. `register(site)`
swaps them in; `evaluation/review/admin.py` calls it once, after every app's admin module has been
imported. A test fails if a registered admin that shows text is not redacted, so a new text-bearing
admin in another app must get its class here."""

from __future__ import annotations

from django.contrib.admin.sites import AdminSite

from coaching import admin as coaching_admin
from coaching.models import CheckIn, Conversation, Learner, Message, Turn
from coaching.research import admin as research_admin
from coaching.research.models import ReminderDelivery
from evaluation.admin import add_conversations_to_eval_set
from evaluation.review.links import conversation_audit_link, fact_audit_link, message_audit_link, trace_audit_link
from evaluation.review.redaction import TextGuardedAdminMixin
from memory import admin as memory_admin
from memory.models import Entity, Fact, Relation, Summary, SurpriseFact
from telemetry import admin as telemetry_admin
from telemetry.models import ModelCall


# --- coaching -----------------------------------------------------------------------------------
class ReviewedConversationAdmin(TextGuardedAdminMixin, coaching_admin.ConversationAdmin):
    list_display = (*coaching_admin.ConversationAdmin.list_display, "audit_link")
    audit_link = staticmethod(conversation_audit_link)
    # Freeze a conversation into an eval set from its changelist.
    actions = [*(coaching_admin.ConversationAdmin.actions or ()), add_conversations_to_eval_set]


class ReviewedMessageAdmin(TextGuardedAdminMixin, coaching_admin.MessageAdmin):
    list_display = (*coaching_admin.MessageAdmin.list_display, "audit_link")
    audit_link = staticmethod(message_audit_link)


class ReviewedTurnAdmin(TextGuardedAdminMixin, coaching_admin.TurnAdmin):
    list_display = (*coaching_admin.TurnAdmin.list_display, "audit_link")
    audit_link = staticmethod(trace_audit_link)


class ReviewedLearnerAdmin(TextGuardedAdminMixin, coaching_admin.LearnerAdmin):
    """Its profile inline shows the goal in the learner's words."""


class ReviewedCheckInAdmin(TextGuardedAdminMixin, coaching_admin.CheckInAdmin):
    """A check-in points at the learner message that reported it."""


class ReviewedReminderDeliveryAdmin(TextGuardedAdminMixin, research_admin.ReminderDeliveryAdmin):
    """A delivery points at the message it sent."""


# --- memory -------------------------------------------------------------------------------------
class ReviewedFactAdmin(TextGuardedAdminMixin, memory_admin.FactAdmin):
    list_display = (*memory_admin.FactAdmin.list_display, "audit_link")
    audit_link = staticmethod(fact_audit_link)


class ReviewedSurpriseReviewAdmin(TextGuardedAdminMixin, memory_admin.SurpriseReviewAdmin):
    list_display = (*memory_admin.SurpriseReviewAdmin.list_display, "audit_link")
    audit_link = staticmethod(fact_audit_link)


class ReviewedSummaryAdmin(TextGuardedAdminMixin, memory_admin.SummaryAdmin):
    pass


class ReviewedEntityAdmin(TextGuardedAdminMixin, memory_admin.EntityAdmin):
    pass


class ReviewedRelationAdmin(TextGuardedAdminMixin, memory_admin.RelationAdmin):
    """Its rows name entities and the fact that is their evidence."""


# --- telemetry ----------------------------------------------------------------------------------
class ReviewedModelCallAdmin(TextGuardedAdminMixin, telemetry_admin.ModelCallAdmin):
    list_display = (*telemetry_admin.ModelCallAdmin.list_display, "audit_link")
    audit_link = staticmethod(trace_audit_link)


REVIEWED_ADMINS = {
    Conversation: ReviewedConversationAdmin, Message: ReviewedMessageAdmin, Turn: ReviewedTurnAdmin,
    Learner: ReviewedLearnerAdmin, CheckIn: ReviewedCheckInAdmin, ReminderDelivery: ReviewedReminderDeliveryAdmin,
    Fact: ReviewedFactAdmin, SurpriseFact: ReviewedSurpriseReviewAdmin, Summary: ReviewedSummaryAdmin,
    Entity: ReviewedEntityAdmin, Relation: ReviewedRelationAdmin, ModelCall: ReviewedModelCallAdmin,
}


def register(site: AdminSite) -> None:
    """Replace each app's own admin with the reviewed one above."""
    for model, admin_class in REVIEWED_ADMINS.items():
        if site.is_registered(model):
            site.unregister(model)
        site.register(model, admin_class)
