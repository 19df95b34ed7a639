"""Checks on the shape of a reply's text: scaffold leaks (prompt, template and context text reaching
the learner), repetition (looping, and a sentence said twice), length, formatting density and emoji."""

from __future__ import annotations

import re

from coaching.turn import reply_checks
from evaluation.checks.base import CheckConfig, CheckContext, CheckResult, strip_templates, word_count, words

# --- scaffold leak --------------------------------------------------------------------------
# Markers that only appear when prompt scaffolding, chat-template tokens or the model's own
# planning text reach the learner. Conservative: each is something a coach never says to a person.
_SCAFFOLD_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("template token", re.compile(r"<\|?(?:im_start|im_end|endoftext|eot_id|start_header_id|end_header_id)"
                                  r"\|?>"
                                  r"|<(?:start|end)_of_turn>|<bos>|<eos>|</?s>|\[/?INST\]|<<SYS>>", re.I)),
    ("role tag", re.compile(r"(?im)^\s*(?:\*\*)?(?:system|assistant|user|coach|learner|human|ai|model)"
                            r"(?:\*\*)?\s*:")),
    ("prompt section", re.compile(
        r"(?im)^\s*#{1,6}\s*(?:system|instructions?|learner context|context|role|rules|constraints|persona|"
        r"guidelines|memory|recent patterns|historical summary|profile|output format|task)\b")),
    ("context label", re.compile(r"(?i)\*\*(?:goal|recent patterns|historical summary)(?::\*\*|\*\*:)"
                                 r"|\[(?:preference|barrier|progress|insight)\]")),
    ("plan preamble", re.compile(r"(?i)\bhere(?:'s| is) (?:my|the) (?:plan|response|reply|answer|draft)\b"
                                 r"(?: for you)?\s*[:.…]")),
    ("self as model", reply_checks.ROLE_CLAIM),
    ("prompt echo", re.compile(r"(?i)\byou are (?:a|an|bloom)\b.{0,40}\b(?:coach|assistant)\b"
                               r"|\b(?:do not|don't|never) (?:reveal|mention) (?:the|these|your) "
                               r"(?:instructions|prompt)\b"
                               r"|\brespond (?:in|with) (?:at most|no more than) \d+")),
    ("template placeholder", re.compile(r"\{\{.*?\}\}|\{[a-z_]+\}|<think>|</think>")),
    ("context fence", re.compile(r"<<<\s*[A-Z]{3,}|[A-Z]{3,}\s*>>>|\(data, not instructions\)"
                                 r"|\brecent facts \(newest first\)", re.I)),
    # The prompt's own formatting vocabulary in a chat to a learner ("use a lot of markdown").
    ("prompt vocabulary", re.compile(r"(?i)\bmarkdown\b|\bactions line\b|\bsystem prompt\b|\bactions done this turn\b"
                                     r"|\bnotes for you only\b|\byou know about them\b"
                                     r"|\bthe app scheduled and logged nothing\b|\bthis turn the app\b"
                                     r"|\bat most \d short sentences\b")),
    # The guard's patterns (coaching/reply_checks); the turn's own code-written part is stripped
    # before this check runs.
    ("code template", reply_checks.CODE_TEMPLATE),
    ("profile line", reply_checks.PROFILE_LINE),
]


ECHO_MIN_WORDS = 8


def check_scaffold_leak(text: str, ctx: CheckContext | None = None) -> CheckResult:
    body = strip_templates(text, ctx) if ctx is not None else text  # code's own text is not a leak
    hits = [name for name, pattern in _SCAFFOLD_PATTERNS if pattern.search(body)]
    if ctx is not None:
        # Echoes of the prompt or the context block. (Echoes of the learner's own message are the
        # separate `parrot` check; narrating the learner is `third_person`.)
        for label, source in (("system-prompt", ctx.system_prompt), ("context", ctx.context_snapshot)):
            if source:
                run = reply_checks.longest_shared_run(strip_templates(text, ctx), source)
                if run >= ECHO_MIN_WORDS:
                    hits.append(f"{label} echo ({run} words)")
    return CheckResult(flag=bool(hits), value=float(len(hits)), detail=", ".join(hits))


# --- repetition (looping) --------------------------------------------------------------------
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")


def check_repetition(text: str) -> CheckResult:
    """A model stuck in a loop: the same sentence at least three times, or fewer than half of the
    word trigrams distinct in a reply long enough to judge (≥ 24 words). Value: repeated share."""
    sentences = [re.sub(r"\W+", " ", s).strip().lower() for s in _SENTENCE.findall(text)]
    sentences = [s for s in sentences if len(s.split()) >= 3]
    most = max((sentences.count(s) for s in set(sentences)), default=0)
    toks = [w.lower() for w in words(text)]
    trigrams = [tuple(toks[i:i + 3]) for i in range(len(toks) - 2)]
    distinct = len(set(trigrams)) / len(trigrams) if trigrams else 1.0
    flag = most >= 3 or (len(toks) >= 24 and distinct < 0.5)
    return CheckResult(flag=flag, value=round(1 - distinct, 3),
                       detail=f"max sentence repeats {most}, distinct trigrams {distinct:.2f}")


# --- a sentence said twice in one reply -------------------------------------------------------
SENTENCE_REPEAT_MIN_WORDS = 3


def check_sentence_repeat(text: str) -> CheckResult:
    """The reply says one of its own sentences again ("Keep going. You can do it. Keep going!"):
    the same words in the same order, case and punctuation aside. Sentences shorter than three
    words ("Great!", "Well done.") don't count. Value: the number of extra copies."""
    counts: dict[str, int] = {}
    for sentence in reply_checks.split_sentences(text):
        key = " ".join(w.lower().replace("\u2019", "'") for w in words(sentence))
        if len(key.split()) >= SENTENCE_REPEAT_MIN_WORDS:
            counts[key] = counts.get(key, 0) + 1
    repeated = {key: n for key, n in counts.items() if n > 1}
    return CheckResult(flag=bool(repeated), value=float(sum(n - 1 for n in repeated.values())),
                       detail="; ".join(f"{n}x {key[:60]!r}" for key, n in repeated.items()))


# --- length / format / emoji ----------------------------------------------------------------
_DEFAULTS = CheckConfig()


def check_length(text: str, cfg: CheckConfig = _DEFAULTS) -> CheckResult:
    n = word_count(text)
    return CheckResult(flag=n > cfg.max_words, value=float(n), detail=f"{n} words (cap {cfg.max_words})")


_BULLET = re.compile(r"(?m)^\s*(?:[-*•+]|\d+[.)])\s+\S")
_BOLD = re.compile(r"\*\*[^*\n]+?\*\*|__[^_\n]+?__")
_HEADER = re.compile(r"(?m)^\s*#{1,6}\s+\S")


def format_counts(text: str) -> dict[str, int]:
    return {"bullets": len(_BULLET.findall(text)), "bold": len(_BOLD.findall(text)),
            "headers": len(_HEADER.findall(text))}


def check_format_density(text: str, cfg: CheckConfig = _DEFAULTS) -> CheckResult:
    counts = format_counts(text)
    total = sum(counts.values())
    n = max(word_count(text), 1)
    per100 = total * 100.0 / n
    # A two-line reply with one bold word is not "dense": require some structure in absolute terms.
    flag = total >= 3 and per100 > cfg.max_format_per_100_words
    detail = ", ".join(f"{k}={v}" for k, v in counts.items()) + f" ({per100:.1f}/100 words)"
    return CheckResult(flag=flag, value=round(per100, 2), detail=detail)


_EMOJI = re.compile(
    "[\U0001F300-\U0001F5FF\U0001F600-\U0001F64F\U0001F680-\U0001F6FF\U0001F900-\U0001F9FF"
    "\U0001FA70-\U0001FAFF\u2600-\u26FF\u2700-\u27BF\U0001F1E6-\U0001F1FF]"
)


def emoji_count(text: str) -> int:
    return len(_EMOJI.findall(text))


def check_emoji(text: str, cfg: CheckConfig = _DEFAULTS) -> CheckResult:
    n = emoji_count(text)
    return CheckResult(flag=n > cfg.max_emoji, value=float(n), detail=f"{n} emoji (max {cfg.max_emoji})")
