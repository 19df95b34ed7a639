"""Model calls of a turn, and the guarded stream: every call runs under the turn's call context
(trace, agent, loop iteration) and counts into the turn's model time and calls."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from django.conf import settings

from coaching.turn import guard, prompts, reply_checks
from coaching.turn.state import Run, add_ms, ms
from core.llm import call_context, chat


class StreamGate:
    """Guarded streaming: tokens are held back until a whole sentence (or, without one, a window of
    WINDOW characters up to a word boundary) has passed the guard's checks; only then is it sent
    to the client. The first sentence that fails stops the stream, so nothing the guard would
    remove is ever shown. What was shown is final: a reply is never half-shown and then replaced.

    `check(text) -> list[Finding]` runs on the whole prefix released so far (flattened as the
    stored reply will be)."""

    WINDOW = 80

    def __init__(self, run: Run, check: Callable[[str], list], *, max_sentences: int | None = None):
        self.run, self.check, self.max_sentences = run, check, max_sentences
        self.shown = ""
        self.failed: list = []  # findings of the first prefix that did not pass
        self.held = False  # stopped releasing (past the cap or formatting not prefix-stable)
        self._released_upto = 0

    def offer(self, text: str) -> bool:
        """Called with the text generated so far. False = stop generating (a check failed)."""
        if self.failed or self.held:
            return not self.failed
        ends = [m.end() for m in re.finditer(r"[.!?…](?=\s)|\n", text)]
        cut = ends[-1] if ends else 0
        if not cut and len(text) - self._released_upto >= self.WINDOW:
            cut = text.rfind(" ")
        if cut <= self._released_upto:
            return True
        return self._release(text[:cut], cut)

    def finish(self, text: str) -> None:
        """The model is done: release the rest if it passes."""
        if not self.failed and not self.held and text.strip():
            self._release(text, len(text))

    def _release(self, prefix: str, upto: int) -> bool:
        candidate, _ = guard.flatten_format(prefix)
        # A sentence ending in ":" (or a bare "1.") is held back until what follows it passes:
        # a stream stopped right after it would otherwise end on a dangling list opener.
        candidate = reply_checks.trim_dangling(candidate.strip())
        sentences = [p for p in re.split(r"(?<=[.!?])\s+|\n+", candidate) if p.strip()]
        if self.max_sentences is not None and len(sentences) > self.max_sentences:
            self.held = True
            return False
        findings = self.check(candidate)
        if findings:
            self.failed = findings
            return False
        if len(candidate) > guard.MAX_REPLY_CHARS or not candidate.startswith(self.shown):
            self.held = True  # the rest waits for the final guard
            return True
        delta = candidate[len(self.shown):]
        if delta:
            if not self.shown:
                self.run.timings["first_shown_ms"] = ms(self.run.t0)
            self.run.send(delta)
            self.shown = candidate
        self._released_upto = upto
        return True


def turn_context(run: Run):
    """The call context every model call of this turn runs under (one row per call in telemetry)."""
    return call_context(trace_id=run.trace_id, conversation_id=run.message.conversation_id,
                        learner_id=run.learner.id, agent=run.specialist, loop_iteration=run.iteration,
                        service="coaching.turn")


def model_text(run: Run, messages: list[dict], *, max_tokens: int, stream: bool,
               gate: StreamGate | None = None, retry: bool = False) -> str:
    """One model call under the turn's call context. With a `gate` and a client listening, tokens
    go through the gate (guarded streaming) and generation stops at the first failing sentence or
    past the hard cap; the guard then decides what is stored."""
    start = time.perf_counter()
    options = {"max_tokens": max_tokens, "temperature": 0.3, "seed": 7, "stop": prompts.STOP,
               "plain_text": settings.BLOOM_PLAIN_REPLY_GRAMMAR}
    if retry:
        # The guard's one regeneration samples wider, from another (fixed) seed: near-greedy decoding
        # of an almost unchanged prompt gave the same refusal twice.
        options.update(temperature=0.7, seed=8)
    with turn_context(run):
        run.iteration += 1
        run.model_calls += 1
        try:
            if not (stream and run.emit is not None and gate is not None):
                return chat(messages, options=options, model=run.model).text
            chat_stream = chat(messages, stream=True, options=options, model=run.model)
            parts: list[str] = []
            try:
                for token in chat_stream:
                    if not parts and "ttft_ms" not in run.timings:
                        run.timings["ttft_ms"] = ms(run.t0)
                    parts.append(token)
                    text = "".join(parts)
                    if not gate.offer(text) or len(text) > guard.MAX_REPLY_CHARS + 80:
                        break
            finally:
                chat_stream.close()
            text = "".join(parts)
            gate.finish(text)
            return text
        finally:
            add_ms(run, "model", start)
