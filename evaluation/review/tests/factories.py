"""Test data written straight through the ORM (no model, no engine): the audit page shows what was
recorded, so the tests record it themselves.

Every text a learner or the coach "wrote" carries a marker (`SECRET_MARKERS`), so permission tests
can scan HTML for it."""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import itertools
import uuid

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import models
from django.utils import timezone

from coaching.models import ApiClient, Conversation, Learner, LearnerProfile, Message, Turn
from memory.models import Entity, Fact, FactHistory, Mention, Relation, Summary
from telemetry.models import ModelCall

SECRET_MARKERS = ("LEARNERSAID", "COACHSAID", "FACTTEXT", "CONTEXTTEXT", "PROMPTTEXT", "RESPONSETEXT",
                  "SUMMARYTEXT", "ENTITYNAME", "TOOLARGTEXT", "GOALTEXT", "SPANTEXT", "REFUSEDTEXT")

_seq = itertools.count(1)


def api_client() -> ApiClient:
    return ApiClient.objects.create(name=f"client-{next(_seq)}")


def learner(client: ApiClient | None = None) -> Learner:
    n = next(_seq)
    obj = Learner.objects.create(client=client or api_client(), display_name=f"learner-{n}")
    LearnerProfile.objects.create(learner=obj, primary_goal=f"GOALTEXT learn cello {n}", goal_category="music")
    return obj


def conversation_with_turns(n_turns: int, *, learner_obj: Learner | None = None, calls_per_turn: int = 2,
                            start: dt.datetime | None = None) -> Conversation:
    """A conversation of `n_turns` learner messages, each with a turn record (routing, context,
    tool call, guard event), `calls_per_turn` telemetry rows, a reply, one fact with an entity
    mention (every third fact is a surprise conflicting with the previous one)."""
    learner_obj = learner_obj or learner()
    conversation = Conversation.objects.create(learner=learner_obj)
    start = start or timezone.now() - dt.timedelta(hours=1)
    tag = f"c{conversation.pk}"
    learner_msgs = Message.objects.bulk_create([
        Message(conversation=conversation, role="learner", status="answered", trace_id=f"{tag}t{i}",
                content=f"LEARNERSAID {tag} #{i}: I practised scales for 20 minutes")
        for i in range(n_turns)])
    # created_at is auto_now_add: spread the timeline so ordering is deterministic.
    for i, m in enumerate(learner_msgs):
        m.created_at = start + dt.timedelta(minutes=2 * i)
    Message.objects.bulk_update(learner_msgs, ["created_at"])
    replies = Message.objects.bulk_create([
        Message(conversation=conversation, role="coach", specialist="coach", reply_to=m, trace_id=m.trace_id,
                content=f"COACHSAID {tag} #{i}: well done, keep going")
        for i, m in enumerate(learner_msgs)])
    for i, r in enumerate(replies):
        r.created_at = start + dt.timedelta(minutes=2 * i, seconds=30)
    Message.objects.bulk_update(replies, ["created_at"])
    Turn.objects.bulk_create([
        Turn(learner_message=m, reply=r, specialist="coach", rule="plan_active", reason="learner has an active plan",
             trace_id=m.trace_id, prompt_version="coach-v3",
             context_snapshot=f"CONTEXTTEXT {tag} #{i}: goal cello; recent facts …",
             guard_events=[{"kind": "length_cap", "detail": "cut at 600 chars", "action": "truncated"}],
             tool_calls=[{"name": "plan_read", "arguments": {"q": f"TOOLARGTEXT {tag} #{i}"},
                          "result": {"sessions": 2}, "ok": True, "by": "coach"}],
             timings={"route": 1, "context": 3, "model": 420}, model_calls=calls_per_turn,
             reading={"act": "move", "source": "rules+model", "cue": "names a session and a new day", "settled": True,
                      "model_ms": 812.0, "rejected": [f"goal: REFUSEDTEXT {tag} #{i}"],
                      "values": {"days": {"value": ["sat"], "span": f"SPANTEXT {tag} #{i}", "source": "model",
                                          "earlier": 0}}})
        for i, (m, r) in enumerate(zip(learner_msgs, replies, strict=True))])
    ModelCall.objects.bulk_create([
        ModelCall(call_id=uuid.uuid4().hex, trace_id=m.trace_id, operation="chat", provider="fake",
                  request_model="tiny-1b", input_tokens=300 + k, output_tokens=40 + k, duration_ms=210.0 + k,
                  status="ok", conversation_id=conversation.pk, learner_id=learner_obj.pk, agent="coach",
                  loop_iteration=k, prompt_content=f"PROMPTTEXT {tag} #{i}.{k}",
                  response_content=f"RESPONSETEXT {tag} #{i}.{k}", created_at=m.created_at)
        for i, m in enumerate(learner_msgs) for k in range(calls_per_turn)])
    now = timezone.now()
    facts = Fact.objects.bulk_create([
        Fact(learner=learner_obj, fact_type="progress", content=f"FACTTEXT {tag} #{i} practises Bach daily",
             confidence=0.8, source_message=m, source_agent="extractor",
             content_hash=hashlib.sha256(f"{tag}-{i}".encode()).hexdigest(), last_accessed_at=now,
             surprise=(i % 3 == 2), surprise_reason="contradicts" if i % 3 == 2 else "")
        for i, m in enumerate(learner_msgs)])
    surprises = [f for i, f in enumerate(facts) if i % 3 == 2]
    for f in surprises:
        f.conflicts_with = facts[facts.index(f) - 1]
    Fact.objects.bulk_update(surprises, ["conflicts_with"])
    FactHistory.objects.bulk_create([FactHistory(fact=f, change="created", service="test",
                                                 after={"content": f.content}) for f in facts])
    entity = Entity.objects.create(learner=learner_obj, canonical_name=f"entitynamebach{tag}", label="person",
                                   display_name=f"ENTITYNAME Bach {tag}", mention_count=len(facts))
    other = Entity.objects.create(learner=learner_obj, canonical_name=f"entitynamecello{tag}", label="topic",
                                  display_name=f"ENTITYNAME cello {tag}", mention_count=0)
    Relation.objects.create(learner=learner_obj, entity_a=entity, entity_b=other, evidence_fact=facts[0]
                            if facts else None)
    Mention.objects.bulk_create([
        Mention(entity=entity, fact=f, start=f.content.index("Bach"), end=f.content.index("Bach") + 4,
                text="Bach", score=0.9) for f in facts])
    if facts:
        Summary.objects.create(learner=learner_obj, period_start=start, period_end=now,
                               text=f"SUMMARYTEXT {tag}: steady practice", fact_count=len(facts))
    return conversation


def user(*, username: str | None = None, groups: tuple[str, ...] = (), superuser: bool = False,
         password: str = "pw-review-123"):
    User = get_user_model()
    username = username or f"user{next(_seq)}"
    if superuser:
        return User.objects.create_superuser(username=username, email=f"{username}@example.org", password=password)
    obj = User.objects.create_user(username=username, password=password, is_staff=True)
    for name in groups:
        obj.groups.add(Group.objects.get(name=name))
    return obj


# --- generic rows for any model (the changelist N+1 test) --------------------------------------

def _value(field: models.Field, i: int):
    if field.choices:
        return field.choices[0][0]
    if isinstance(field, models.UUIDField):
        return uuid.uuid4()
    if isinstance(field, (models.CharField, models.TextField, models.SlugField)):
        raw = f"{field.name}-{i}-{uuid.uuid4().hex[:8]}"
        return raw[: field.max_length] if getattr(field, "max_length", None) else raw
    if isinstance(field, models.BooleanField):
        return False
    if isinstance(field, (models.IntegerField, models.BigIntegerField, models.PositiveIntegerField,
                          models.PositiveSmallIntegerField, models.SmallIntegerField)):
        # Unique numbers (a rubric version, …) must not collide with rows a data migration loaded.
        return 20000 + next(_seq) if field.unique else i % 100 + 5  # fits a smallint, ≥ any small minimum
    if isinstance(field, models.FloatField):
        return 0.5
    if isinstance(field, models.DecimalField):
        return decimal.Decimal("1")
    if isinstance(field, models.DateTimeField):
        return timezone.now()
    if isinstance(field, models.DateField):
        return timezone.now().date()
    if isinstance(field, models.JSONField):
        return {}
    raise TypeError(f"no test value for {field!r}")


def make_row(model: type[models.Model], i: int = 0, depth: int = 0) -> models.Model:
    """One row with every required field set; each foreign key gets a fresh parent (so composite
    unique constraints hold), nullable keys too, so list columns that follow them are exercised."""
    proxy = model
    model = model._meta.concrete_model
    kwargs = {}
    for field in model._meta.concrete_fields:
        if field.auto_created or isinstance(field, models.AutoField):
            continue
        if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            continue
        if field.is_relation:
            target = field.related_model
            if target is model or (field.null and depth >= 2):
                continue
            kwargs[field.name] = make_row(target, i, depth + 1)
            continue
        optional = field.has_default() or field.null or (
            field.blank and not field.choices and isinstance(field, (models.CharField, models.TextField)))
        # Optional fields keep their default, except unique ones without a default (two blanks clash).
        if optional and not (field.unique and not field.has_default()):
            continue
        kwargs[field.name] = _value(field, i)
    if model is Fact:
        kwargs.setdefault("content_hash", uuid.uuid4().hex)
        kwargs.setdefault("last_accessed_at", timezone.now())
    if model._meta.label_lower == "evaluation.judgescore":
        kwargs["score"] = 3  # score XOR invalid
    if model is Mention:
        kwargs.update(start=0, end=4, text="Bach")
    if proxy._meta.label_lower == "memory.surprisefact":
        kwargs.update(surprise=True, surprise_reason="contradicts", conflicts_with=make_row(Fact, i, depth + 1))
    return model.objects.create(**kwargs)


def make_rows(model: type[models.Model], n: int) -> None:
    for i in range(n):
        make_row(model, i + 1000 * next(_seq))
