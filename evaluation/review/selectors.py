"""Reads of the review console. The audit page is assembled here with a fixed number of queries
(one per table, never one per turn), so its cost does not grow with the length of a conversation."""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Prefetch, QuerySet
from django.db.models.functions import TruncWeek
from django.utils import timezone

from coaching.models import Conversation, Message, Role, Turn
from evaluation.review.models import DefectCategory, DefectTag, RootCauseLayer
from memory.models import Fact, Mention
from telemetry.models import ModelCall


@dataclass
class AuditTurn:
    index: int
    turn: Turn | None
    learner_message: Message
    reply: Message | None
    calls: list[ModelCall] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    tags: list[DefectTag] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        return f"turn-{self.turn.pk}" if self.turn else f"message-{self.learner_message.pk}"

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        rows = []
        for call in (self.turn.tool_calls if self.turn else None) or []:
            if isinstance(call, dict):
                rows.append({"name": call.get("name", "?"), "ok": call.get("ok"), "by": call.get("by", ""),
                             "arguments": _pretty(call.get("arguments")), "result": _pretty(call.get("result"))})
            else:
                rows.append({"name": "?", "ok": None, "by": "", "arguments": _pretty(call), "result": ""})
        return rows

    @property
    def reading(self) -> dict[str, Any] | None:
        """How the message was read (act, who read it, what settled it) and each value with the
        learner's words it came from: where a wrong write starts, it starts here."""
        stored = self.turn.reading if self.turn else None
        if not isinstance(stored, dict):
            return None
        values = [{"slot": slot, "value": _pretty(v.get("value")), "span": v.get("span", ""),
                   "source": v.get("source", ""), "earlier": v.get("earlier", 0)}
                  for slot, v in (stored.get("values") or {}).items() if isinstance(v, dict)]
        return {"act": stored.get("act", "?"), "source": stored.get("source", ""), "cue": stored.get("cue", ""),
                "settled": stored.get("settled", True), "model_ms": stored.get("model_ms") or 0,
                "values": values, "rejected": list(stored.get("rejected") or [])}

    @property
    def guard_events(self) -> list[dict[str, Any]]:
        events = (self.turn.guard_events if self.turn else None) or []
        return [e if isinstance(e, dict) else {"kind": "?", "detail": str(e), "action": ""} for e in events]

    @property
    def tokens(self) -> tuple[int, int]:
        return (sum(c.input_tokens or 0 for c in self.calls), sum(c.output_tokens or 0 for c in self.calls))

    @property
    def call_ms(self) -> float:
        return sum(c.duration_ms or 0 for c in self.calls)


@dataclass
class ConversationAuditData:
    conversation: Conversation
    turns: list[AuditTurn]
    other_messages: list[Message]  # messages that are neither a learner turn nor its reply
    total_calls: int
    total_tags: int


def _pretty(value: Any) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=1, ensure_ascii=False, default=str, sort_keys=True)


def conversation_audit(*, conversation_id: int) -> ConversationAuditData:
    """Everything the audit timeline shows, in 7 queries whatever the number of turns:
    conversation+learner, messages, turns, defect tags (+tagger), model calls, facts (+conflict),
    mentions (+entity)."""
    conversation = Conversation.objects.select_related("learner").get(pk=conversation_id)
    messages = list(Message.objects.filter(conversation_id=conversation_id).order_by("created_at", "id"))
    by_id = {m.pk: m for m in messages}
    turns = list(
        Turn.objects.filter(learner_message__conversation_id=conversation_id)
        .prefetch_related(Prefetch("defect_tags",
                                   queryset=DefectTag.objects.select_related("tagged_by").order_by("created_at")))
        .order_by("learner_message__created_at", "learner_message_id")
    )
    turn_by_message = {t.learner_message_id: t for t in turns}

    trace_ids = [t.trace_id for t in turns if t.trace_id]
    calls_by_trace: dict[str, list[ModelCall]] = defaultdict(list)
    if trace_ids:
        for call in ModelCall.objects.filter(trace_id__in=trace_ids).order_by("created_at", "id"):
            calls_by_trace[call.trace_id].append(call)

    learner_ids = [m.pk for m in messages if m.role == Role.LEARNER]
    facts_by_message: dict[int, list[Fact]] = defaultdict(list)
    if learner_ids:
        facts = (Fact.objects.filter(source_message_id__in=learner_ids)
                 .select_related("conflicts_with")
                 .defer("embedding", "conflicts_with__embedding")
                 .prefetch_related(Prefetch("mentions", queryset=Mention.objects.select_related("entity")
                                            .order_by("start")))
                 .order_by("created_at", "id"))
        for fact in facts:
            facts_by_message[fact.source_message_id].append(fact)

    reply_ids = {t.reply_id for t in turns if t.reply_id}
    reply_ids |= {m.pk for m in messages if m.reply_to_id and m.role != Role.LEARNER}
    replies_to = {m.reply_to_id: m for m in messages if m.reply_to_id and m.role != Role.LEARNER}
    rows: list[AuditTurn] = []
    used: set[int] = set()
    for message in messages:
        if message.role != Role.LEARNER:
            continue
        turn = turn_by_message.get(message.pk)
        reply = by_id.get(turn.reply_id) if turn and turn.reply_id else replies_to.get(message.pk)
        row = AuditTurn(index=len(rows) + 1, turn=turn, learner_message=message, reply=reply,
                        calls=calls_by_trace.get(turn.trace_id, []) if turn else [],
                        facts=facts_by_message.get(message.pk, []),
                        tags=list(turn.defect_tags.all()) if turn else [])
        rows.append(row)
        used.add(message.pk)
        if reply is not None:
            used.add(reply.pk)
    other = [m for m in messages if m.pk not in used and m.pk not in reply_ids]
    return ConversationAuditData(conversation=conversation, turns=rows, other_messages=other,
                                 total_calls=sum(len(r.calls) for r in rows),
                                 total_tags=sum(len(r.tags) for r in rows))


def defect_tags_for_report(*, since: dt.datetime | None = None) -> QuerySet[DefectTag]:
    qs = DefectTag.objects.all()
    if since is not None:
        qs = qs.filter(created_at__gte=since)
    return qs


@dataclass
class DefectReport:
    weeks: list[dt.date]
    # (category, layer) -> per-week counts, aligned with `weeks`
    rows: list[dict[str, Any]]
    matrix: list[dict[str, Any]]  # category rows x layer columns (totals over the window)
    layer_totals: dict[str, int]
    category_totals: dict[str, int]
    total: int
    weekly_totals: list[int]


def defect_report(*, weeks: int = 12, now: dt.datetime | None = None) -> DefectReport:
    """Defects grouped by category × root-cause layer, counted per ISO week (one aggregate query).

    The point of the page is the shared root pattern: the matrix shows whether many categories
    trace back to one layer (e.g. "grounding", "dishonest state" and "gate passed" all in
    architecture), which a list of tickets hides."""
    now = now or timezone.now()
    this_monday = (now - dt.timedelta(days=now.weekday())).date()
    week_list = [this_monday - dt.timedelta(weeks=i) for i in range(weeks - 1, -1, -1)]
    since = dt.datetime.combine(week_list[0], dt.time.min, tzinfo=dt.UTC)
    counts = (defect_tags_for_report(since=since)
              .annotate(week=TruncWeek("created_at", tzinfo=dt.UTC))
              .values("category", "layer", "week").annotate(n=Count("id")).order_by())
    cells: dict[tuple[str, str], dict[dt.date, int]] = defaultdict(dict)
    for row in counts:
        week = row["week"].date() if isinstance(row["week"], dt.datetime) else row["week"]
        cells[(row["category"], row["layer"])][week] = row["n"]

    category_label = dict(DefectCategory.choices)
    layer_label = dict(RootCauseLayer.choices)
    rows = []
    for (category, layer), by_week in sorted(cells.items()):
        series = [by_week.get(w, 0) for w in week_list]
        rows.append({"category": category, "category_label": category_label.get(category, category),
                     "layer": layer, "layer_label": layer_label.get(layer, layer),
                     "counts": series, "total": sum(series)})
    layer_totals = dict.fromkeys(RootCauseLayer.values, 0)
    category_totals = dict.fromkeys(DefectCategory.values, 0)
    matrix_cells: dict[tuple[str, str], int] = defaultdict(int)
    for row in rows:
        layer_totals[row["layer"]] = layer_totals.get(row["layer"], 0) + row["total"]
        category_totals[row["category"]] = category_totals.get(row["category"], 0) + row["total"]
        matrix_cells[(row["category"], row["layer"])] += row["total"]
    matrix = [{"category": c, "label": category_label[c],
               "cells": [matrix_cells.get((c, layer), 0) for layer in RootCauseLayer.values],
               "total": category_totals[c]} for c in DefectCategory.values]
    weekly_totals = [sum(r["counts"][i] for r in rows) for i in range(len(week_list))]
    return DefectReport(weeks=week_list, rows=rows, matrix=matrix, layer_totals=layer_totals,
                        category_totals=category_totals, total=sum(weekly_totals), weekly_totals=weekly_totals)
