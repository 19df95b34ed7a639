"""What a reading is: the act of a learner message and the values it carries, each with the span of
the learner's words it came from, read once per turn (coaching.turn.reading.reader) and passed down
the pipeline (route → act → say → guard → persist). Pure data."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

# The act: what the learner does with the message.
ANSWER, REPORT, QUESTION, PLAN, MOVE, CANCEL, CHANGE, UNDO, SMALL_TALK, OTHER = (
    "answer", "report", "question", "plan", "move", "cancel", "change", "undo", "small_talk", "other")
ACTS = (ANSWER, REPORT, QUESTION, PLAN, MOVE, CANCEL, CHANGE, UNDO, SMALL_TALK, OTHER)

# The values a message can carry. `days` is a tuple of day codes ("mon" … "sun", Monday first);
# `time` is "HH:MM"; `session` the ref of one planned session of the context; `option` a pending
# option's label or "none"; `about` what a question is about (plan | calendar | progress | other);
# `gloss` a goal the coach says back before storing it: given in another language (as the learner
# said it or as the model put it in English), or in words the rules could not stand behind (never
# stored from the reading: the coach asks whether it understood).
SLOTS = ("goal", "category", "weekly_hours", "session_minutes", "days", "time_of_day", "time", "confidence",
         "outcome", "session", "option", "concern", "about", "lang", "gloss")
# Slots whose value is written somewhere when the act is acted on (profile, plan, check-ins):
# a wrong one is a wrong write. `concern`, `about`, `lang` and `gloss` only shape the words of the reply.
WRITTEN_SLOTS = ("goal", "category", "weekly_hours", "session_minutes", "days", "time_of_day", "time",
                 "confidence", "outcome", "session", "option")
# Acts that lead to a write when their values are complete.
WRITING_ACTS = (ANSWER, REPORT, MOVE, CANCEL, CHANGE)


@dataclass(frozen=True)
class Value:
    value: Any
    span: str  # the learner's words it came from (a substring of the message or an earlier one)
    source: str  # "rules" | "model"
    earlier: int = 0  # 0: this message; n: the n-th earlier learner message (most recent first)


@dataclass(frozen=True)
class SessionRef:
    """A planned session as a reader sees it: enough to resolve "my Thursday session"."""

    ref: str
    start: datetime  # in the learner's time zone
    minutes: int
    status: str
    past: bool

    @property
    def planned_start(self) -> datetime:  # the name report_targets reads
        return self.start

    @property
    def day(self) -> str:
        return ("mon", "tue", "wed", "thu", "fri", "sat", "sun")[self.start.weekday()]


@dataclass(frozen=True)
class ReadContext:
    """What a message is read against: the question pending, the options pending, the plan."""

    step: str = "done"  # the onboarding step waiting for an answer, or "done"
    goal: str = ""
    pending_kind: str = ""  # plan | reschedule | report | move | "" (no options pending)
    # After onboarding, the question code's part of the last reply ended on, when it offered no
    # options ("How did your session (Mon 09:28) go — did you do it or skip it?"): what the message
    # most likely answers.
    asked: str = ""
    options: tuple[dict, ...] = ()
    plan: tuple[SessionRef, ...] = ()
    earlier: tuple[str, ...] = ()  # earlier learner messages, most recent first
    today: date | None = None
    answers: Any = None  # the onboarding answers so far (coaching.onboarding.OnboardingAnswers)
    rejected_in_row: int = 0  # answers the gate rejected in a row at this step
    undoable: bool = False  # the previous turn wrote something "undo" can take back

    def reportable(self) -> list[SessionRef]:
        """The sessions a report can be about: over, and not reported yet (planned or missed)."""
        return [s for s in self.plan if s.past and s.status in ("planned", "missed")]

    def holds(self, slot: str, value: Any) -> bool:
        """The learner's profile already holds this value of a profile slot a message can change
        (the best time, the weekly hours), as the onboarding answers read it."""
        held = getattr(self.answers, _HELD.get(slot, ""), None) if self.answers is not None else None
        if held is None or held == "":
            return False
        return float(held) == float(value) if slot == "weekly_hours" else held == value


# The profile slots a message can change after onboarding, and the onboarding answer each is.
_HELD = {"time_of_day": "best_time", "weekly_hours": "weekly_hours"}


@dataclass(frozen=True)
class Reading:
    act: str
    values: dict[str, Value] = field(default_factory=dict)
    source: str = "rules"  # rules | model | rules+model
    cue: str = ""  # the words or rule that decided the act (stored as the routing reason)
    settled: bool = True  # False: the rules could not settle it and no valid proposal did either
    gate: Any = None  # the onboarding gate's outcome when the rules read an onboarding answer
    rejected: tuple[str, ...] = ()  # proposed values code refused, with why ("goal: a greeting")
    model_ms: float = 0.0  # time the model's proposal took (0 when none was asked for)

    @property
    def proposed(self) -> bool:
        """The act was settled from a model's proposal (the rules could not settle the message): its
        values point at the learner's words, but that the words mean this act is the model's guess."""
        return "model" in self.source

    def get(self, slot: str, default: Any = None) -> Any:
        value = self.values.get(slot)
        return value.value if value is not None else default

    def has(self, slot: str) -> bool:
        return slot in self.values

    def as_dict(self) -> dict:
        """Stored on the Turn for audits: act, source, cue and each value with its span."""
        return {"act": self.act, "source": self.source, "cue": self.cue, "settled": self.settled,
                "values": {k: {"value": list(v.value) if isinstance(v.value, tuple) else v.value,
                               "span": v.span, "source": v.source, "earlier": v.earlier}
                           for k, v in self.values.items()},
                "rejected": list(self.rejected), "model_ms": self.model_ms}


@dataclass(frozen=True)
class Proposal:
    """A model's proposal before code settles it: the act and, per slot, the learner's words."""

    act: str
    quotes: dict[str, str]
    ms: float = 0.0
    error: str = ""
