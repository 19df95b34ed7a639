"""Learner memory: facts (with a change history), threshold summaries, an entity graph, and the
per-message extraction marker. Points at coaching models by string label only (memory imports no
coaching code)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from pgvector.django import VectorField

from core.identity.models import Learner, Message
from memory.rules import FACT_TYPES, TIERS


class FactType(models.TextChoices):
    PREFERENCE = "preference", "Preference"
    BARRIER = "barrier", "Barrier"
    PROGRESS = "progress", "Progress"
    INSIGHT = "insight", "Insight"


class Tier(models.TextChoices):
    HOT = "hot", "Hot"
    WARM = "warm", "Warm"
    COLD = "cold", "Cold"


assert tuple(FactType.values) == FACT_TYPES and tuple(Tier.values) == TIERS


class Summary(models.Model):
    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="memory_summaries")
    # The id a client sees (a fact's `summary_id`, fact history); the integer key stays inside.
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    period_start = models.DateTimeField()
    period_end = models.DateTimeField()
    text = models.TextField()
    fact_count = models.PositiveIntegerField()
    model = models.CharField(max_length=120, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "summaries"
        indexes = [models.Index(fields=["learner", "-created_at"], name="summary_learner_recent_idx")]

    def __str__(self) -> str:
        return f"summary {self.period_start:%Y-%m-%d}–{self.period_end:%Y-%m-%d} ({self.fact_count} facts)"


class Fact(models.Model):
    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="memory_facts")
    # The id a client sees (REST `/api/v1/memory/facts/<uuid>`, MCP); the integer key stays inside.
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    fact_type = models.CharField(max_length=12, choices=FactType.choices)
    content = models.CharField(max_length=500)
    confidence = models.FloatField(default=0.5)
    source_message = models.ForeignKey(
        Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="memory_facts"
    )
    source_agent = models.CharField(max_length=40, blank=True)  # "extractor", "api", "mcp", specialist name
    embedding = VectorField(dimensions=settings.EMBEDDING_DIM, null=True, blank=True)
    content_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    last_accessed_at = models.DateTimeField()
    access_count = models.PositiveIntegerField(default=0)
    tier = models.CharField(max_length=5, choices=Tier.choices, default=Tier.HOT)
    archived = models.BooleanField(default=False)
    # Surprise: very similar to `conflicts_with` but says something different. Neither is changed;
    # both show up in the admin review queue.
    surprise = models.BooleanField(default=False)
    conflicts_with = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="conflicting_facts"
    )
    surprise_reason = models.CharField(max_length=40, blank=True)
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )
    # When the fact stopped being true (set with superseded_by; the row and its history stay).
    valid_to = models.DateTimeField(null=True, blank=True)
    summary = models.ForeignKey(Summary, null=True, blank=True, on_delete=models.SET_NULL, related_name="facts")
    # Sent by a client with the fact (batch ingest): when it was said (created_at is when it was
    # stored), the client's own id for it (a resend of the same id is a duplicate) and free metadata.
    occurred_at = models.DateTimeField(null=True, blank=True)
    external_id = models.CharField(max_length=200, blank=True, default="")
    metadata = models.JSONField(default=dict, blank=True)
    # Hubness (memory/hubness.py): the mean cosine to this fact's nearest other live facts of the
    # learner, which search subtracts from the vector score.
    hubness = models.FloatField(default=0.0)

    class Meta:
        constraints = [
            # Exact duplicates (normalised text) cannot exist per learner, even under concurrency.
            models.UniqueConstraint(fields=["learner", "content_hash"], name="fact_unique_hash_per_learner"),
            models.CheckConstraint(condition=Q(confidence__gte=0) & Q(confidence__lte=1), name="fact_confidence_0_1"),
            models.CheckConstraint(condition=Q(fact_type__in=FACT_TYPES), name="fact_type_valid"),
        ]
        indexes = [
            # Read path: recent live facts of one learner.
            models.Index(fields=["learner", "archived", "-created_at"], name="fact_learner_recent_idx"),
            models.Index(fields=["learner", "summary"], name="fact_learner_summary_idx"),
            # No index holds last_accessed_at, access_count or tier: a search's access mark writes the
            # first two (and the periodic tier move the third), and an update that changes no indexed
            # column is a HOT update, with no new entry in any of this table's indexes, the HNSW
            # graph included (migration 0013).
            models.Index(fields=["surprise"], name="fact_surprise_idx", condition=Q(surprise=True)),
            models.Index(fields=["learner", "external_id"], name="fact_learner_external_idx",
                         condition=~Q(external_id="")),
        ]

    def __str__(self) -> str:
        return f"[{self.fact_type}] {self.content[:80]}"


class SurpriseFact(Fact):
    """The admin's surprise review queue (a filtered changelist of Fact)."""

    class Meta:
        proxy = True
        verbose_name = "surprise (review queue)"
        verbose_name_plural = "surprise review queue"


class FactHistory(models.Model):
    """One row per change to a fact: audits can replay what happened, when, and which service did it."""

    fact = models.ForeignKey(Fact, on_delete=models.CASCADE, related_name="history")
    change = models.CharField(max_length=30)  # created, strengthened, surprise, tier, archived, ...
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    service = models.CharField(max_length=60)
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["at", "id"]
        verbose_name_plural = "fact history"

    def __str__(self) -> str:
        return f"{self.change} by {self.service} at {self.at:%Y-%m-%d %H:%M}"


class Entity(models.Model):
    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="memory_entities")
    canonical_name = models.CharField(max_length=200)
    label = models.CharField(max_length=30)
    display_name = models.CharField(max_length=200)  # the first surface form seen
    mention_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "entities"
        constraints = [
            models.UniqueConstraint(fields=["learner", "canonical_name", "label"], name="entity_unique_per_learner"),
        ]

    def __str__(self) -> str:
        return f"{self.display_name} ({self.label})"


class Mention(models.Model):
    """A span of a fact (or message) where an entity occurs. Invariant (checked before insert):
    source_text[start:end] == text."""

    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="mentions")
    fact = models.ForeignKey(Fact, null=True, blank=True, on_delete=models.CASCADE, related_name="mentions")
    message = models.ForeignKey(
        Message, null=True, blank=True, on_delete=models.CASCADE, related_name="memory_mentions"
    )
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    text = models.CharField(max_length=500)
    score = models.FloatField()

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(end__gt=models.F("start")), name="mention_nonempty"),
            models.CheckConstraint(condition=Q(fact__isnull=False) | Q(message__isnull=False),
                                   name="mention_has_source"),
            models.UniqueConstraint(fields=["fact", "start", "end", "entity"], name="mention_unique_span"),
        ]

    def __str__(self) -> str:
        return f"{self.text!r} [{self.start}:{self.end}]"


class Relation(models.Model):
    """Co-occurrence of two entities within a fact; weight counts the facts they share."""

    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="memory_relations")
    entity_a = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="relations_out")
    entity_b = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="relations_in")
    kind = models.CharField(max_length=30, default="co_occurs")
    evidence_fact = models.ForeignKey(Fact, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    weight = models.FloatField(default=1.0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["entity_a", "entity_b", "kind"], name="relation_unique_pair"),
            # a < b: one row per unordered pair.
            models.CheckConstraint(condition=Q(entity_a__lt=models.F("entity_b")), name="relation_ordered_pair"),
        ]

    def __str__(self) -> str:
        return f"{self.entity_a_id} -{self.kind}- {self.entity_b_id} ({self.weight:g})"


class ExtractionRun(models.Model):
    """Marks a message as processed by `memory.extract_facts` (idempotency: one per message)."""

    message = models.OneToOneField(Message, on_delete=models.CASCADE, related_name="memory_extraction")
    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="memory_extractions")
    created = models.PositiveSmallIntegerField(default=0)
    strengthened = models.PositiveSmallIntegerField(default=0)
    surprises = models.PositiveSmallIntegerField(default=0)
    duplicates = models.PositiveSmallIntegerField(default=0)
    dropped = models.PositiveSmallIntegerField(default=0)  # items the validator rejected
    model = models.CharField(max_length=120, blank=True)
    at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"extraction of message {self.message_id}: +{self.created}"


class EntityRun(models.Model):
    """Marks a fact as processed by `memory.extract_entities`; counts spans dropped by validation."""

    fact = models.OneToOneField(Fact, on_delete=models.CASCADE, related_name="entity_run")
    kept = models.PositiveSmallIntegerField(default=0)
    dropped = models.PositiveSmallIntegerField(default=0)
    at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"entities of fact {self.fact_id}: {self.kept} kept, {self.dropped} dropped"
