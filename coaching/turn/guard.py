"""Output guard, all code: hard length cap, formatting flattening, scaffold-leak detection,
goal-drift detection, and the honesty check (claims vs tool calls actually made this turn).
The engine decides what to do with a finding (regenerate once, then a safe fallback) and records
every finding as a guard event on the Turn."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from coaching.turn import prompts, reply_checks
from coaching.turn.reading.language import ENGLISH, language_of

MAX_REPLY_CHARS = 600

# Scaffold leaks: role tags, chat-template tokens, our own prompt section markers, planning
# preambles. Matched case-insensitively anywhere in the reply.
_LEAK_PATTERNS: list[tuple[str, str]] = [
    ("role_tag", r"(?im)^\s*(assistant|user|system|coach|learner|bloom)\s*:"),
    ("template_token", r"<\|?(im_start|im_end|endoftext|eot_id|start_header_id)\|?>|\[/?INST\]"),
    ("heading", r"(?m)^\s*#{1,6}\s"),
    ("section_marker", r"(?i)\b(about the learner|actions done this turn|actions line|recent conversation|memory block|"
                       r"learner profile:|system prompt|instructions:|tool result from|notes for you only|"
                       r"(?:what )?you know about them|the app scheduled and logged nothing|this turn the app|"
                       r"learner memory|recent facts \(newest|at most \d short sentences)"),
    ("code_template", reply_checks.CODE_TEMPLATE.pattern),
    ("profile_line", reply_checks.PROFILE_LINE.pattern),
    ("role_claim", reply_checks.ROLE_CLAIM.pattern),
    ("plan_preamble", r"(?i)\bhere(?:'s| is) (?:my|a|the|your) (?:plan|step-by-step plan|response|answer)\b"),
    ("json_blob", r"^\s*[\[{]\s*\""),
]

# Claims of actions code did not take. The writes (schedule, move, log, cancel, remind) are the shared
# check `reply_checks.action_claims` (evaluation counts the same), judged against the action tools
# code ran in this turn (`ToolBox.done`). The calendar claim stays the guard's own and strict: it
# is true only once the learner confirmed subscribing to their calendar feed (ToolBox.done adds
# "calendar" then); until then the coach must not say it put anything there, asked or not.
_CALENDAR_CLAIM = re.compile(r"(?i)\b(to|in|into|on) your (?:google |outlook )?calendar\b"
                             r"|\bcalendar (?:invite|event|reminder)\b|\bsent you\b|\bemailed\b")
# "I can't add to your calendar myself", "I haven't added anything to your calendar": said honestly.
_CALENDAR_NEGATED = re.compile(r"(?i)\b(?:can't|cannot|can not|couldn't|haven't|have not|hasn't|didn't|did not|"
                               r"won't|isn't|is not|not)(?:\s+[\w']+){0,3}\s*$")

_CAREER_WORDS = (r"(?i)\b(career|job|jobs|employer|resume|résumé|cv|promotion|workplace|"
                 r"professional development|interview)\b")


@dataclass
class Finding:
    kind: str  # leak | too_long | format | honesty | drift | third_person | parrot | refusal | loop
    detail: str


# Guard-event kinds that are the engine's own bookkeeping (gate decisions, intent readings), not
# the guard acting on a reply: evaluation's "guard fired" rate leaves them out.
BOOKKEEPING_KINDS = frozenset({"onboarding", "intent"})


def cap_length(text: str, limit: int = MAX_REPLY_CHARS) -> tuple[str, bool]:
    """Cut at the last sentence boundary before `limit`; hard cut with an ellipsis if none."""
    text = text.strip()
    if len(text) <= limit:
        return text, False
    head = text[:limit]
    ends = [m.end() for m in re.finditer(r"[.!?…](?=\s|$)", head)]
    if ends and ends[-1] >= limit // 3:
        return head[:ends[-1]].strip(), True
    return head.rsplit(" ", 1)[0].rstrip(",;:") + "…", True


def flatten_format(text: str) -> tuple[str, bool]:
    """The reply is a chat message: strip markdown emphasis and turn bullets into sentences."""
    original = text
    text = re.sub(r"\*\*(.+?)\*\*|__(.+?)__", lambda m: m.group(1) or m.group(2), text)
    text = re.sub(r"(?m)^\s*(?:[-*•]|\d+[.)])\s+", "", text)
    text = re.sub(r"\n{2,}", "\n", text).strip()
    return text, text != original


def find_leaks(text: str, system_prompt: str = "") -> list[Finding]:
    findings = [Finding("leak", name) for name, pattern in _LEAK_PATTERNS if re.search(pattern, text)]
    if system_prompt:
        # An echo of the system prompt: any run of 8 consecutive words copied from it.
        words = re.findall(r"[a-z']+", system_prompt.lower())
        reply = " " + " ".join(re.findall(r"[a-z']+", text.lower())) + " "
        for i in range(0, max(0, len(words) - 7)):
            if " " + " ".join(words[i:i + 8]) + " " in reply:
                findings.append(Finding("leak", "system_prompt_echo"))
                break
    return findings


def find_false_claims(text: str, tools_done: set[str], known_times: set | None = None) -> list[Finding]:
    """Claims and promises of writes not backed by a successful tool call of the matching kind in
    this turn (`reply_checks.action_claims`), calendar claims without a confirmed feed, and, given
    the day-and-times the turn knows (`known_times`), a session time that is none of them."""
    findings = [Finding("honesty", f"claims {words!r} without {tool}")
                for tool, words in reply_checks.action_claims(text, tools_done)]
    if known_times is not None:
        findings += [Finding("honesty", f"names {said!r}, which is no session, option or time said")
                     for said in reply_checks.times_unknown(text, known_times)[:1]]
    if "calendar" not in tools_done:
        plain = text.replace("’", "'")
        for match in _CALENDAR_CLAIM.finditer(plain):
            if not _CALENDAR_NEGATED.search(plain[max(0, match.start() - 60):match.start()]):
                findings.append(Finding("honesty", f"claims {match.group(0)!r} without calendar"))
                break
    return findings


def find_drift(text: str, goal_category: str) -> list[Finding]:
    """Script fixation: career framing for a learner whose goal is not a career goal."""
    if goal_category and goal_category != "career":
        match = re.search(_CAREER_WORDS, text)
        if match:
            return [Finding("drift", f"career framing ({match.group(0)!r}) for a {goal_category} goal")]
    return []


def remove_sentences(text: str, pattern_findings: list[Finding], tools_done: set[str],
                     known_times: set | None = None) -> str:
    """Drop the sentences carrying a false claim (used after the regeneration also failed)."""
    sentences = re.split(r"(?<=[.!?])\s+", text)
    kept = [s for s in sentences if not find_false_claims(s, tools_done, known_times)]
    return " ".join(kept).strip()


def find_voice(text: str, learner_text: str = "", previous_replies: Iterable[str] = (),
               messages: list[dict] | None = None, goal: str = "") -> list[Finding]:
    """The shared deterministic checks (coaching/turn/reply_checks.py, also run by evaluation): the reply
    narrates the learner in the third person, parrots their message, greets them when they did not
    greet, refuses an ordinary coaching message, repeats a reply already sent twice in this
    conversation, speaks as the learner ("my life") or asks them for tips (the coach's job),
    announces a guide or a list instead of giving its points, or copies the prompt's example
    exchange (found in `messages`) where nobody said it."""
    findings = []
    if hit := reply_checks.coach_as_learner(text, learner_text, goal):
        findings.append(Finding("coach_as_learner", hit))
    if hit := reply_checks.asks_for_advice(text):
        findings.append(Finding("asks_for_advice", hit))
    if hit := reply_checks.announces_content(text):
        findings.append(Finding("announces", hit))
    if messages:
        pairs = prompts.exemplar_pairs(messages)
        example_texts = {t for pair in pairs for t in pair}
        allowed = [learner_text, *(str(m.get("content") or "") for m in messages
                                   if m.get("content") not in example_texts)]
        if pairs and (hit := reply_checks.example_copy(text, pairs, allowed)):
            findings.append(Finding("example_copy", hit))
    if hit := reply_checks.third_person(text):
        findings.append(Finding("third_person", hit))
    if learner_text and (hit := reply_checks.parrot(text, learner_text)):
        findings.append(Finding("parrot", hit))
    if learner_text and (hit := reply_checks.unprompted_greeting(text, learner_text)):
        findings.append(Finding("unprompted_greeting", hit))
    if hit := reply_checks.refusal(text):
        findings.append(Finding("refusal", hit))
    if hit := reply_checks.loop(text, previous_replies):
        findings.append(Finding("loop", hit))
    return findings


def find_language(text: str) -> list[Finding]:
    """The coach answers in English, the language its templates, checks and staff read. The small
    model follows the learner's language ("Olá! Quero aprender inglês…" got "Claro, vou ajudar!"):
    a reply code tells is in another language is regenerated, then replaced."""
    told = language_of(text)
    return [Finding("language", f"reply in {told}")] if told not in (None, ENGLISH) else []


def find_asks_known(text: str, known_goal: str) -> list[Finding]:
    hit = reply_checks.asks_known_goal(text, known_goal)
    return [Finding("asks_known", hit)] if hit else []


def find_repeats(text: str, previous_replies: Iterable[str]) -> list[Finding]:
    """A sentence repeating one of the coach's last two replies (the stream stops before it)."""
    return [Finding("repeat", s[:80]) for s in reply_checks.repeated_sentences(text, previous_replies)[:1]]


def drop_repeats(text: str, previous_replies: Iterable[str]) -> tuple[str, list[str]]:
    """The reply without the sentences that repeat one of the coach's recent replies (all those the
    model was shown, reply_checks.REPEAT_LOOKBACK)."""
    repeated = reply_checks.repeated_sentences(text, previous_replies)
    if not repeated:
        return text, []
    kept = [s for s in reply_checks.split_sentences(text) if s not in repeated]
    return " ".join(kept).strip(), repeated


def find_dodge(text: str, learner_text: str, goal: str = "") -> list[Finding]:
    """A question answered with a generic line (the whole reply is needed to judge this, so it is
    not a stream check)."""
    generic = [t.format(goal=goal) for pair in prompts.GOAL_FALLBACKS.values() for t in pair if t and goal]
    generic += [t for t in prompts.FALLBACKS.values() if len(t) > 12]
    hit = reply_checks.dodge(text, learner_text, generic, by_words=False)
    return [Finding("dodge", hit)] if hit else []
