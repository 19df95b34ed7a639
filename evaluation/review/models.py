"""Defect review: staff tag a chat turn with what went wrong (category) and which layer caused it
(architecture, prompt, data model, model choice), so the review looks for the shared root pattern
instead of closing symptoms one by one. Every tag change leaves a `DefectTagHistory` row.

`ConversationAudit` is a proxy of `coaching.Conversation`: it gives the review console its own
changelist and permission (`review.view_conversationaudit`) without touching the coaching admin."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from coaching.models import Conversation, Turn


class DefectCategory(models.TextChoices):
    GROUNDING = "grounding", "Grounding / fabrication"
    DISHONEST_STATE = "dishonest_state", "Dishonest state claim"
    GATE_WITHOUT_ANSWER = "gate_without_answer", "Gate passed without a genuine answer"
    ROUTING_OVERRIDE = "routing_override", "Routing override"
    SCAFFOLD_LEAK = "scaffold_leak", "Scaffold leak"
    PREMATURE_ADVICE = "premature_advice", "Premature advice"
    VERBOSITY = "verbosity", "Verbosity"
    CONTINUITY_LOSS = "continuity_loss", "Continuity loss"
    OTHER = "other", "Other"


class RootCauseLayer(models.TextChoices):
    ARCHITECTURE = "architecture", "Architecture"
    PROMPT = "prompt", "Prompt"
    DATA_MODEL = "data_model", "Data model"
    MODEL_CHOICE = "model_choice", "Model choice"


class DefectTag(models.Model):
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="defect_tags")
    category = models.CharField(max_length=24, choices=DefectCategory.choices)
    layer = models.CharField("root-cause layer", max_length=16, choices=RootCauseLayer.choices)
    note = models.TextField(blank=True)
    tagged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="defect_tags"
    )
    # Set when the tagged turn's conversation was frozen into an evaluation set.
    transcript = models.ForeignKey(
        "evaluation.Transcript", null=True, blank=True, on_delete=models.SET_NULL, related_name="defect_tags"
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["category", "layer", "created_at"], name="defecttag_cat_layer_idx")]
        permissions = [
            # Not tied to defect tags as such: it is the one switch for seeing learner/coach message
            # text, fact and summary text and telemetry content anywhere in the admin.
            ("view_message_text", "Can see message, fact and summary text and telemetry content"),
        ]

    def __str__(self) -> str:
        return f"{self.get_category_display()} / {self.get_layer_display()} (turn {self.turn_id})"


class DefectTagHistory(models.Model):
    """Audit row for every write to a defect tag; kept when the tag is deleted."""

    tag = models.ForeignKey(DefectTag, null=True, blank=True, on_delete=models.SET_NULL, related_name="history")
    tag_pk = models.BigIntegerField()  # survives deletion of the tag
    action = models.CharField(max_length=20)  # created, sent_to_eval, deleted
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    data = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-at", "-id"]
        verbose_name_plural = "defect tag history"

    def __str__(self) -> str:
        return f"{self.action} tag {self.tag_pk} at {self.at:%Y-%m-%d %H:%M}"


class ConversationAudit(Conversation):
    """The review console's view of a conversation (changelist + audit timeline)."""

    class Meta:
        proxy = True
        verbose_name = "conversation audit"
        verbose_name_plural = "conversation audits"
