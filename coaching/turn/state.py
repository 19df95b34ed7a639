"""What one turn carries while it runs: the learner, the message, what was streamed, the guard
events, timings and model-call counts (all stored on the Turn), and the result types."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from coaching.models import Learner, Message, Turn
from coaching.turn.router import COACH

REPLY_MAX_TOKENS = 96
ACK_MAX_TOKENS = 40


class ModelDown(Exception):
    """The model is unavailable for a turn that needs it. The learner message is kept (unanswered)."""

    def __init__(self, message: str, *, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


@dataclass
class TurnResult:
    reply: Message
    turn: Turn
    replaced: bool = False  # the stored content differs from what was streamed


@dataclass
class Run:
    learner: Learner
    message: Message
    trace_id: str
    emit: Callable[[str], None] | None
    specialist: str = COACH
    streamed: list[str] = field(default_factory=list)
    guard_events: list[dict] = field(default_factory=list)
    timings: dict = field(default_factory=dict)
    model_calls: int = 0
    iteration: int = 0
    outcome: str = "ok"
    offered_options: list = field(default_factory=list)
    code_text: str = ""  # what code appended to the model's words (stored on the Turn)
    times_known: tuple | None = None  # (what it was read after, session times): coaching.turn.reply.known_times
    known_goal: str = ""  # the stored goal once onboarded: a reply must not ask for it again
    # First paragraph (the model's words) of the coach's earlier replies, newest first: loop guard.
    previous_replies: list[str] = field(default_factory=list)
    # What the stages hand down (read → route → act → say): set by coaching.turn.run, read by the
    # specialists, so no stage takes a list of positional arguments or parses the message again.
    reading: Any = None  # coaching.turn.reading.types.Reading
    decision: Any = None  # coaching.turn.router.RouteDecision
    profile: Any = None  # coaching.models.LearnerProfile
    previous: Turn | None = None  # the previous coach turn (its options, its writes)
    system: str = ""
    context: str = ""
    history: list = field(default_factory=list)
    toolbox: Any = None  # coaching.turn.tools.ToolBox
    tracker: bool = False  # control arm: templated text only
    due: Any = None  # the planned session waiting for a report, if any
    model: str | None = None  # "provider:model" override (evaluation model-swap runs); None = settings
    prompt_version: str | None = None  # label of a non-default prompt (evaluation), stored on the Turn
    t0: float = field(default_factory=time.perf_counter)

    def send(self, text: str) -> None:
        self.streamed.append(text)
        if self.emit is not None:
            self.emit(text)

    def guard_event(self, kind: str, detail: str, action: str) -> None:
        self.guard_events.append({"kind": kind, "detail": detail, "action": action})


def ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 1)


def add_ms(run: Run, phase: str, start: float) -> None:
    run.timings[phase] = round(run.timings.get(phase, 0.0) + ms(start), 1)
