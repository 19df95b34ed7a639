"""The LLM judge: prompts, JSON schemas and output validation. Every judge call goes through
`core.llm.chat(..., operation="judge")`, so each one is a telemetry row.

The judge only gives numbers (1–5 per dimension, or a pairwise preference) with a short reason.
Nothing here decides pass/fail: that is `evaluation.compare`, from thresholds, in code.

Invalid output (not JSON, wrong shape, a score outside 1–5, a missing dimension) is retried once
with a corrective note; what is still invalid after that is recorded as invalid, never as a score."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.llm import LLMError, LLMInvalidOutput

MAX_ATTEMPTS = 2  # the first try and exactly one retry
SCORE_MIN, SCORE_MAX = 1, 5
REASON_MAX_CHARS = 300

ChatFn = Callable[..., Any]


@dataclass
class DimensionScore:
    score: int | None
    reason: str = ""
    invalid: bool = False


@dataclass
class JudgeOutcome:
    scores: dict[str, DimensionScore]
    attempts: int
    calls: int
    errors: list[str] = field(default_factory=list)
    unavailable: bool = False  # the model could not be reached: nothing was judged


# --- prompt ---------------------------------------------------------------------------------
JUDGE_SYSTEM = (
    "You grade one reply written by a learning coach in a chat. Judge only the reply marked REPLY, "
    "using the rubric. Longer is not better: a short, warm, specific reply can deserve 5. "
    "Answer with JSON only, one entry per dimension: an integer score from 1 to 5 and a one-sentence reason."
)


def rubric_text(dimensions: list[dict[str, Any]]) -> str:
    lines = []
    for dim in dimensions:
        lines.append(f"{dim['key']}: {dim.get('question', dim.get('name', ''))}")
        for level in ("1", "3", "5"):
            anchor = (dim.get("anchors") or {}).get(level)
            if anchor:
                lines.append(f"  {level} = {anchor}")
    return "\n".join(lines)


def format_exchange(history: list[tuple[str, str]]) -> str:
    return "\n".join(f"{'Learner' if role == 'learner' else 'Coach'}: {text}" for role, text in history) or "(none)"


def build_pointwise_messages(*, dimensions: list[dict[str, Any]], profile_line: str, history: list[tuple[str, str]],
                             learner_text: str, reply_text: str, expected_behaviour: str) -> list[dict[str, str]]:
    user = (
        f"RUBRIC\n{rubric_text(dimensions)}\n\n"
        f"LEARNER PROFILE\n{profile_line}\n\n"
        f"WHAT A GOOD COACH DOES HERE\n{expected_behaviour or '(not specified)'}\n\n"
        f"EARLIER IN THE CHAT\n{format_exchange(history)}\n\n"
        f"LEARNER SAYS\n{learner_text}\n\n"
        f"REPLY\n{reply_text}\n\n"
        f"Give JSON with keys: {', '.join(d['key'] for d in dimensions)}."
    )
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]


PAIRWISE_SYSTEM = (
    "You compare two replies (A and B) a learning coach could send to the same learner message. "
    "For each rubric dimension say which reply is better, or 'tie'. Longer is not better; the order "
    "in which the replies are shown means nothing. Answer with JSON only."
)


def build_pairwise_messages(*, dimensions: list[dict[str, Any]], profile_line: str, history: list[tuple[str, str]],
                            learner_text: str, reply_a: str, reply_b: str,
                            expected_behaviour: str) -> list[dict[str, str]]:
    user = (
        f"RUBRIC\n{rubric_text(dimensions)}\n\n"
        f"LEARNER PROFILE\n{profile_line}\n\n"
        f"WHAT A GOOD COACH DOES HERE\n{expected_behaviour or '(not specified)'}\n\n"
        f"EARLIER IN THE CHAT\n{format_exchange(history)}\n\n"
        f"LEARNER SAYS\n{learner_text}\n\n"
        f"REPLY A\n{reply_a}\n\nREPLY B\n{reply_b}\n\n"
        f"Give JSON with keys: {', '.join(d['key'] for d in dimensions)}; each "
        '{"better": "A" | "B" | "tie", "reason": "..."}.'
    )
    return [{"role": "system", "content": PAIRWISE_SYSTEM}, {"role": "user", "content": user}]


# --- schemas --------------------------------------------------------------------------------
def pointwise_schema(keys: list[str]) -> dict[str, Any]:
    item = {"type": "object",
            "properties": {"score": {"type": "integer", "minimum": SCORE_MIN, "maximum": SCORE_MAX},
                           # No maxLength: llama.cpp expands it into a grammar so large that sampling
                           # slows to a crawl; reasons are bounded by max_tokens and cut in code.
                           "reason": {"type": "string"}},
            "required": ["score", "reason"]}
    return {"type": "object", "properties": dict.fromkeys(keys, item), "required": list(keys)}


def pairwise_schema(keys: list[str]) -> dict[str, Any]:
    item = {"type": "object",
            "properties": {"better": {"type": "string", "enum": ["A", "B", "tie"]},
                           "reason": {"type": "string"}},
            "required": ["better", "reason"]}
    return {"type": "object", "properties": dict.fromkeys(keys, item), "required": list(keys)}


# --- validation (in code, whatever the provider enforced) -----------------------------------
def _coerce_obj(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return None
    return raw


def parse_pointwise(raw: Any, keys: list[str]) -> tuple[dict[str, DimensionScore], list[str]]:
    """Per-dimension validation. Returns (scores, problems); a dimension with a problem is marked
    invalid with score None. Booleans and floats like 4.5 are rejected: the scale is integers."""
    obj = _coerce_obj(raw)
    problems: list[str] = []
    scores: dict[str, DimensionScore] = {}
    if not isinstance(obj, dict):
        problems.append(f"not a JSON object: {str(raw)[:120]!r}")
        return {k: DimensionScore(None, "", True) for k in keys}, problems
    for key in keys:
        entry = obj.get(key)
        if isinstance(entry, dict):
            score, reason = entry.get("score"), entry.get("reason", "")
        else:  # tolerate {"naturalness": 4} but still require the range
            score, reason = entry, ""
        if isinstance(score, float) and score.is_integer():
            score = int(score)
        if isinstance(score, str) and score.strip().isdigit():
            score = int(score.strip())
        if isinstance(score, bool) or not isinstance(score, int):
            problems.append(f"{key}: missing or non-integer score {score!r}")
            scores[key] = DimensionScore(None, str(reason)[:REASON_MAX_CHARS], True)
        elif not SCORE_MIN <= score <= SCORE_MAX:
            problems.append(f"{key}: score {score} out of range {SCORE_MIN}-{SCORE_MAX}")
            scores[key] = DimensionScore(None, str(reason)[:REASON_MAX_CHARS], True)
        else:
            scores[key] = DimensionScore(score, str(reason)[:REASON_MAX_CHARS], False)
    return scores, problems


def parse_pairwise(raw: Any, keys: list[str]) -> tuple[dict[str, DimensionScore], list[str]]:
    """Scores are the preference for reply A: +1 A better, -1 B better, 0 tie."""
    obj = _coerce_obj(raw)
    problems: list[str] = []
    scores: dict[str, DimensionScore] = {}
    if not isinstance(obj, dict):
        problems.append(f"not a JSON object: {str(raw)[:120]!r}")
        return {k: DimensionScore(None, "", True) for k in keys}, problems
    mapping = {"a": 1, "b": -1, "tie": 0}
    for key in keys:
        entry = obj.get(key)
        better = entry.get("better") if isinstance(entry, dict) else entry
        reason = entry.get("reason", "") if isinstance(entry, dict) else ""
        value = mapping.get(str(better).strip().lower()) if better is not None else None
        if value is None:
            problems.append(f"{key}: 'better' must be A, B or tie, got {better!r}")
            scores[key] = DimensionScore(None, str(reason)[:REASON_MAX_CHARS], True)
        else:
            scores[key] = DimensionScore(value, str(reason)[:REASON_MAX_CHARS], False)
    return scores, problems


# --- calling the judge ----------------------------------------------------------------------
def _default_chat() -> ChatFn:
    from core.llm import chat

    return chat


def call_judge(*, messages: list[dict[str, str]], keys: list[str], schema: dict[str, Any],
               parse: Callable[[Any, list[str]], tuple[dict[str, DimensionScore], list[str]]],
               model: str | None, temperature: float, seed: int, max_tokens: int,
               chat_fn: ChatFn | None = None) -> JudgeOutcome:
    """One judgement with at most one retry. The retry repeats the request with a note naming
    what was wrong (at temperature 0 an identical request would give the identical answer).
    Dimensions still invalid after the retry stay invalid; valid ones from the last attempt count."""
    chat_fn = chat_fn or _default_chat()
    errors: list[str] = []
    options = {"temperature": temperature, "seed": seed, "max_tokens": max_tokens}
    attempt_messages = list(messages)
    scores: dict[str, DimensionScore] = {k: DimensionScore(None, "", True) for k in keys}
    attempts = 0
    for attempt in range(MAX_ATTEMPTS):
        attempts = attempt + 1
        problems: list[str]
        try:
            result = chat_fn(attempt_messages, schema=schema, options=options, model=model, operation="judge")
            raw = result.parsed if result.parsed is not None else result.text
            scores, problems = parse(raw, keys)
        except LLMInvalidOutput as exc:  # the provider's own schema check failed
            problems = [f"invalid output: {exc}"[:300]]
            scores = {k: DimensionScore(None, "", True) for k in keys}
        except LLMError as exc:  # provider down after its own retries: nothing to score
            problems = [f"{type(exc).__name__}: {exc}"[:300]]
            scores = {k: DimensionScore(None, "", True) for k in keys}
            errors.extend(problems)
            return JudgeOutcome(scores=scores, attempts=attempts, calls=attempts, errors=errors, unavailable=True)
        if not problems:
            return JudgeOutcome(scores=scores, attempts=attempts, calls=attempts, errors=errors)
        errors.extend(f"attempt {attempts}: {p}" for p in problems)
        attempt_messages = [*messages, {"role": "user", "content": (
            "Your previous answer was invalid (" + "; ".join(problems)[:400] + "). Answer again with JSON only, "
            f"every key present, integer scores {SCORE_MIN}-{SCORE_MAX}." if parse is parse_pointwise else
            "Your previous answer was invalid (" + "; ".join(problems)[:400] + "). Answer again with JSON only, "
            "every key present, 'better' one of A, B, tie.")}]
    for dim in scores.values():
        if dim.invalid:
            dim.score = None
    return JudgeOutcome(scores=scores, attempts=attempts, calls=attempts, errors=errors)
