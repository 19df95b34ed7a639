"""One chat turn: route (code) → context (code) → specialist (code actions + model phrasing) →
guard (code) → persist once (+ outbox for memory extraction).

THE MODEL/CODE BOUNDARY, in one place:
- code decides: which specialist (router.py), whether onboarding advances and every profile value
  (coaching/onboarding/), the plan options offered and which one "option B"/"yes" means, which
  session a "done"/"skipped" refers to (intent.py), every write (schedule_session, log_checkin),
  length, leaks, honesty.
- the model decides: the wording of the coaching sentences of a reply (and, in the optional
  read-only tool loop, which read tools to consult). Onboarding turns are code's text alone
  unless BLOOM_ONBOARDING_MODEL_ACK adds a model acknowledgement. The Turn records which part
  code wrote (code_text). If the model is down, deterministic specialists answer from templates;
  free-form specialists return "unavailable" and the learner message is kept as unanswered.

`turn_run(message=..., emit=...)` is synchronous; `emit(text)` receives tokens as they are
generated (the SSE view runs it in a worker thread). The returned TurnResult is the authority:
if the guard rewrote the streamed text, `replaced` is True and clients show `content`.

Modules, in the order a turn uses them: `run` (the turn, step by step), `state` (what one run
carries), `model` (model calls and the guarded stream), `tool_loop` (the optional read-only
loop), `reply` (the guard applied to model text: regenerate once, then the fallback),
`phrasing` (messages for a model call and words the specialists share), the specialists
`onboarding`, `planner`, `checkin` and `undo`, and `persistence` (store the reply once)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from coaching.turn.run import turn_run
    from coaching.turn.state import ModelDown, TurnResult

__all__ = ["ModelDown", "TurnResult", "turn_run"]


def __getattr__(name: str):
    # Loaded on first use: the pure stages (coaching.turn.reading) are imported by the services
    # layer, which the turn itself imports; an eager import here would make that a circle.
    if name == "turn_run":
        from coaching.turn.run import turn_run

        return turn_run
    if name in ("ModelDown", "TurnResult"):
        from coaching.turn import state

        return getattr(state, name)
    raise AttributeError(name)
