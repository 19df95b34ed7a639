"""From model text to the reply that is stored: the output guard applied (regenerate once with a
corrective note, then the templated fallback), and, for a streamed reply, what the stream gate
already showed."""

from __future__ import annotations

import time
from collections.abc import Callable

from coaching.selectors import sessions_in_view
from coaching.services import learner_tz
from coaching.turn import guard, prompts, reply_checks
from coaching.turn.model import StreamGate, model_text
from coaching.turn.state import REPLY_MAX_TOKENS, Run, add_ms, ms
from coaching.turn.tools import ToolBox
from core.llm.types import LLMError


def known_times(run: Run) -> set[tuple[int, str]]:
    """The day-and-times a reply may name (reply_checks.session_times): the learner's sessions in
    view as they stand after this turn's writes, and what the options, code's words and the
    conversation said. Read again only when a write, an option or code's words were added since:
    the stream gate asks at every sentence."""
    key = (len(run.toolbox.calls) if run.toolbox is not None else 0, len(run.offered_options), run.code_text)
    if run.times_known is None or run.times_known[0] != key:
        tz = learner_tz(run.learner)
        planned = {(start.weekday(), start.strftime("%H:%M"))
                   for start in (s.planned_start.astimezone(tz) for s in sessions_in_view(learner=run.learner))}
        said = [run.message.content, run.code_text, *run.previous_replies,
                *(getattr(m, "content", "") for m in run.history),
                *(str(o.get("summary", "")) for o in run.offered_options)]
        run.times_known = (key, planned | {pair for text in said for pair in reply_checks.session_times(text)})
    return run.times_known[1]


def stream_checks(run: Run, *, system: str, toolbox: ToolBox, goal_category: str,
                  extra: Callable[[str], list] | None = None,
                  messages: list[dict] | None = None) -> Callable[[str], list]:
    """The guard's checks for a prefix in the stream (the loop check waits for the whole reply)."""
    def check(text: str) -> list:
        findings = (_content_findings(run, text, system=system, toolbox=toolbox, goal_category=goal_category)
                    + guard.find_voice(text, run.message.content, messages=messages, goal=run.known_goal)
                    + guard.find_repeats(text, run.previous_replies))
        return findings + (extra(text) if extra else [])
    return check


def _content_findings(run: Run, text: str, *, system: str, toolbox: ToolBox, goal_category: str) -> list:
    """The checks a streamed prefix and a whole reply share: leaks, false claims, drift, asking for
    the goal it knows, another language. (The voice checks differ: a prefix has no loop yet.)"""
    return (guard.find_leaks(text, system) + guard.find_false_claims(text, toolbox.done, known_times(run))
            + guard.find_drift(text, goal_category) + guard.find_asks_known(text, run.known_goal)
            + guard.find_language(text))


def streamed_reply(run: Run, raw: str, gate: StreamGate | None, **guard_args) -> str:
    """The stored reply after a (possibly) streamed generation. If the gate showed anything, that
    is the reply (each released prefix passed the guard); a later sentence that failed is cut, not
    shown. If nothing was shown, the full guard runs (regenerate once, then the fallback)."""
    if gate is None or not gate.shown:
        return guarded(run, raw, **guard_args)
    if gate.failed:
        run.guard_event(gate.failed[0].kind, "; ".join(f"{f.kind}:{f.detail}" for f in gate.failed)[:300],
                        "stream stopped; reply cut after the sentences already shown")
    elif gate.held:
        # Held back (over the cap or formatting changed earlier text): the guard decides the rest,
        # which is shown after the gate's text only if it extends it.
        text = guarded(run, raw, **{**guard_args, "allow_regenerate": False})
        return text if text.startswith(gate.shown) else gate.shown
    # loop and dodge: only judgeable on the whole reply
    late = guard.find_voice(gate.shown, "", run.previous_replies)
    if guard_args.get("check_dodge"):
        late += guard.find_dodge(gate.shown, run.message.content, run.known_goal)
    for finding in late:
        run.guard_event(finding.kind, finding.detail, "recorded (already shown)")
    return gate.shown


def guarded(run: Run, text: str, *, messages: list[dict], system: str, toolbox: ToolBox,
            goal_category: str, fallback: str, allow_regenerate: bool = True, learner_text: str = "",
            goal: str = "", check_dodge: bool = False) -> str:
    """Apply the output guard. Leak / false claim / goal drift / third person / parrot / refusal /
    loop → regenerate once (non-streamed) with a corrective note; still bad → the templated
    fallback, which is second person and about the goal (false claims: drop the sentence). Each
    finding is recorded."""
    start = time.perf_counter()
    try:
        for attempt in range(2):
            text, changed = guard.flatten_format(text)
            if changed:
                run.guard_event("format", "markdown/bullets flattened", "rewrote")
            text, cut = guard.cap_length(text)
            if cut:
                run.guard_event("too_long", f"over {guard.MAX_REPLY_CHARS} chars", "cut at sentence boundary")
            text, repeated = guard.drop_repeats(text, run.previous_replies)
            if repeated and text:
                run.guard_event("repeat", repeated[0][:80], "dropped sentence repeated from a recent reply")
            # A cut (length cap, max tokens) can leave "…some tips:\n1." at the end: trim the opener.
            dangling = reply_checks.dangling_end(text)
            text = reply_checks.trim_dangling(text) if dangling else text
            if dangling and text:
                run.guard_event("dangling", dangling, "trimmed list opener")
            findings = (_content_findings(run, text, system=system, toolbox=toolbox, goal_category=goal_category)
                        + guard.find_voice(text, learner_text or run.message.content, run.previous_replies,
                                           messages, goal=goal or run.known_goal)
                        + (guard.find_dodge(text, learner_text or run.message.content, goal or run.known_goal)
                           if check_dodge else []))
            if not text.strip():
                findings.append(guard.Finding("repeat", repeated[0][:80]) if repeated
                                else guard.Finding("dangling", dangling) if dangling
                                else guard.Finding("empty", "empty reply"))
            if not findings:
                return text
            detail = "; ".join(f"{f.kind}:{f.detail}" for f in findings)
            if attempt == 0 and allow_regenerate:
                run.guard_event(findings[0].kind, detail, "regenerate")
                note = prompts.regenerate_note(sorted({f.kind for f in findings}))
                # The guidance is prompt text too: a regenerated reply reciting it is a leak.
                system = f"{system}\n{note}"
                g_start = time.perf_counter()
                try:
                    text = model_text(run, prompts.with_guidance(messages, note),
                                      max_tokens=REPLY_MAX_TOKENS, stream=False, retry=True)
                except LLMError as exc:
                    run.guard_event("regenerate_failed", type(exc).__name__, "fallback")
                    text = ""
                finally:
                    run.timings["guard"] = run.timings.get("guard", 0) - ms(g_start)  # counted as model
                continue
            if all(f.kind == "honesty" for f in findings):
                trimmed = guard.remove_sentences(text, findings, toolbox.done, known_times(run))
                if trimmed:
                    run.guard_event("honesty", detail, "removed false claim")
                    return trimmed
            run.guard_event(findings[0].kind, detail, "fallback")
            run.outcome = "fallback"
            return fallback
        return fallback
    finally:
        add_ms(run, "guard", start)
