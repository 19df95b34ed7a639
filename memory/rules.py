"""Deterministic memory rules on one text or value: validation, hashing, the words, numbers,
speaker and names of a statement, decay, tiers, span checks, entity canonicalisation and read-path
escaping. Pure functions (no database, no model) so each rule is unit-testable; the rules that
compare two statements (duplicate, restatement, surprise) are in `memory.comparison`."""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.errors import ApplicationError
from memory import conf

FACT_TYPES = ("preference", "barrier", "progress", "insight")
TIERS = ("hot", "warm", "cold")



# --- text hygiene ---------------------------------------------------------------------------------
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_WS = re.compile(r"\s+")


def clean_text(text: str) -> str:
    """Strip control characters and collapse whitespace (facts are one-line statements)."""
    return _WS.sub(" ", _CONTROL.sub(" ", unicodedata.normalize("NFC", text))).strip()


def content_hash(text: str) -> str:
    """Hash of the normalised text: case, whitespace and trailing punctuation do not make a new fact."""
    norm = _WS.sub(" ", clean_text(text).casefold()).strip().rstrip(".!?;, ")
    return hashlib.sha256(norm.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CleanFact:
    fact_type: str
    content: str
    confidence: float


def clamp_confidence(value: Any, *, strict: bool) -> float:
    """Confidence in [0, 1]. Numbers are clamped. A non-number ("high", None, NaN) is an error when
    `strict` (API input) and `conf.DEFAULT_CONFIDENCE` otherwise (model output: we keep the fact)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(float(value)):
        if strict and value is not None:
            raise ApplicationError("confidence must be a number between 0 and 1", code="invalid_confidence",
                                   field="confidence")
        return conf.DEFAULT_CONFIDENCE
    return min(1.0, max(0.0, float(value)))


def validate_fact(item: Any, *, strict: bool) -> CleanFact:
    """One fact dict → CleanFact. `strict` (API): every violation raises ApplicationError.
    Lenient (model output): over-long text is cut at the limit on a word boundary; a wrong type or
    empty content still raises (the item is dropped by the caller)."""
    if not isinstance(item, dict):
        raise ApplicationError("a fact must be an object", code="invalid_fact")
    fact_type = item.get("fact_type")
    if not isinstance(fact_type, str) or fact_type.strip().lower() not in FACT_TYPES:
        raise ApplicationError(f"fact_type must be one of {', '.join(FACT_TYPES)}", code="invalid_fact_type",
                               field="fact_type")
    content = item.get("content")
    if not isinstance(content, str):
        raise ApplicationError("content must be a string", code="invalid_content", field="content")
    content = clean_text(content)
    if not content:
        raise ApplicationError("content is empty", code="invalid_content", field="content")
    if len(content) > conf.FACT_MAX_CHARS:
        if strict:
            raise ApplicationError(f"content is longer than {conf.FACT_MAX_CHARS} characters",
                                   code="content_too_long", field="content")
        content = content[: conf.FACT_MAX_CHARS].rsplit(" ", 1)[0] or content[: conf.FACT_MAX_CHARS]
    return CleanFact(fact_type=fact_type.strip().lower(), content=content,
                     confidence=clamp_confidence(item.get("confidence"), strict=strict))


def validate_model_facts(parsed: Any, *, source: str | None = None) -> tuple[list[CleanFact], int]:
    """The extractor's parsed JSON → (valid facts, number dropped). Never raises: the schema already
    constrained the shape; what is still wrong is dropped and counted. With `source`, facts not
    grounded in it (see `grounded`) are dropped too."""
    items = parsed.get("facts") if isinstance(parsed, dict) else None
    if not isinstance(items, list):
        return [], 0
    if source is not None and request_to_coach(source):
        # The chat turn sends no extraction for such a message; one queued before that rule still
        # stores nothing.
        return [], len(items)
    kept: list[CleanFact] = []
    dropped = 0
    seen: set[str] = set()
    for item in items:
        try:
            fact = validate_fact(item, strict=False)
        except ApplicationError:
            dropped += 1
            continue
        if fact.content.rstrip().endswith("?"):  # a question asks; it states nothing about the learner
            dropped += 1
            continue
        if source is not None:
            content = ungendered(fact.content, source)
            if content is None or invented_goal(content, source) or done_as_asked(content, source):
                dropped += 1
                continue
            content = third_person(content)
            fact = CleanFact(fact_type=fact.fact_type, content=content, confidence=fact.confidence)
        h = content_hash(fact.content)
        if h in seen or (source is not None and not grounded(fact.content, asserted(source))):
            dropped += 1
            continue
        seen.add(h)
        kept.append(fact)
    if len(kept) > conf.MAX_FACTS_PER_MESSAGE:
        dropped += len(kept) - conf.MAX_FACTS_PER_MESSAGE
        kept = kept[: conf.MAX_FACTS_PER_MESSAGE]
    return kept, dropped


# A yes/no question opens with an auxiliary or modal verb and asserts nothing: "did you put my
# sessions in my calendar?" leaves open whether they are there, so it grounds no fact (the extractor
# stored "The learner put their sessions in their Google calendar"). A wh-question presupposes what
# it asks about ("why do I keep forgetting the words?" tells that the learner forgets), so it still
# grounds facts, as statements do. English auxiliaries are a closed class.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n")
_POLAR_QUESTION = re.compile(
    r"(?i)^(?:(?:so|and|but|also|btw|ok|okay|hey|um|oh|wait|coach)\b[\s,]*)*"
    r"(?:do|does|did|is|are|was|were|am|can|could|should|would|will|shall|may|might|must|have|has|had)"
    r"(?:n't|n’t)?\b")


def asserted(message: str) -> str:
    """The message without its yes/no questions: the words that state something."""
    kept = [s for s in (part.strip() for part in _SENTENCE_END.split(message))
            if s and not (s.endswith("?") and _POLAR_QUESTION.match(s))]
    return " ".join(kept)


# A message that only asks the coach to do something ("can we plan my week?", "let's plan") says
# nothing about the learner: the extractor stored it as the preference "Can we plan my week?" and
# the insight "The learner can plan their week.". Such a message
# opens with a request and has no word beyond the coach's actions: "let's plan around my night
# shifts" tells something (night shifts), so its facts are kept.
_REQUEST = re.compile(r"(?i)^\s*(?:(?:can|could|would|will|shall)\s+(?:we|you)|let'?s|please|help\s+me)\b")
_REQUEST_WORDS = frozenset({
    "can", "could", "would", "will", "shall", "we", "you", "let's", "lets", "please", "help", "me", "us", "with",
    "my", "the", "a", "this", "next", "our", "some", "of", "it", "again", "plan", "planning", "plans", "make", "do",
    "start", "go", "over", "talk", "check", "in", "review", "reflect", "remind", "schedule", "week", "weekly",
    "today", "tomorrow", "now", "session", "sessions", "progress", "goal", "goals", "day"})


def request_to_coach(message: str) -> bool:
    """Is the learner's message only a request to the coach (no fact about the learner in it)?"""
    text = message.lower().replace("’", "'")
    return bool(_REQUEST.match(text)) and all(w in _REQUEST_WORDS for w in re.findall(r"[a-z']+", text))


# A learner's gender is theirs to say: the extractor wrote "The learner is planning his week." from
# "let's plan my week". Where the learner's message has no gendered pronoun, the
# fact's possessive and object pronouns become "their"/"them"; a gendered subject ("he is") cannot
# be mended without grammar, so that fact is dropped.
_GENDERED = re.compile(r"(?i)\b(?:he|him|his|himself|she|her|hers|herself)\b")
_GENDERED_SUBJECT = re.compile(r"(?i)\b(?:he|she)\b")
_UNGENDER = ((re.compile(r"(?i)\b(?:himself|herself)\b"), "themselves"), (re.compile(r"(?i)\bhis\b"), "their"),
             (re.compile(r"(?i)\bhers\b"), "theirs"), (re.compile(r"(?i)\bhim\b"), "them"),
             (re.compile(r"(?i)\bher(?=\s+[a-z0-9])(?!\s+(?:to|for|with|at|on|in|about|and|or|a|an|the)\b)"),
              "their"),
             (re.compile(r"(?i)\bher\b"), "them"))


def ungendered(fact: str, source: str) -> str | None:
    """The fact without a gender the source message never gave; None when it cannot be mended."""
    if not _GENDERED.search(fact) or _GENDERED.search(source):
        return fact
    if _GENDERED_SUBJECT.search(fact):
        return None
    for pattern, neutral in _UNGENDER:  # "His" at a sentence start stays capitalised: "Their"
        fact = pattern.sub(lambda m, n=neutral: n.capitalize() if m.group(0)[0].isupper() else n, fact)
    return fact


# A fact about "the learner" is in the third person throughout: the extractor kept the learner's
# own "I" inside one ("The learner did their first session yesterday, 40 minutes of listening
# practice, but I was really tired."), which reads, in the coach's
# context and in search hits, as if the coach had been tired.
_FIRST_PERSON = ((re.compile(r"\bI am\b|\bI'm\b"), "they are"), (re.compile(r"\bI was\b"), "they were"),
                 (re.compile(r"\bI've\b"), "they have"), (re.compile(r"\bI'd\b"), "they would"),
                 (re.compile(r"\bI'll\b"), "they will"), (re.compile(r"\bI\b"), "they"),
                 (re.compile(r"(?i)\bmyself\b"), "themselves"), (re.compile(r"(?i)\bmine\b"), "theirs"),
                 (re.compile(r"(?i)\bmy\b"), "their"), (re.compile(r"(?i)\bme\b"), "them"))


def third_person(fact: str) -> str:
    """A fact that speaks of "the learner" with the learner's own first person put in the third."""
    if not re.search(r"(?i)\blearner\b", fact):
        return fact
    for pattern, third in _FIRST_PERSON:
        fact = pattern.sub(lambda m, t=third: t.capitalize() if m.start() == 0 else t, fact)
    return fact


# A goal is the learner's to state: the extractor wrote "The learner's goal is to improve listening
# practice." from "I did my first session yesterday, 40 minutes of listening practice" (the
# learner's goal was something else). A fact that states a goal
# needs a message that speaks of wanting or aiming at something.
_GOAL_FACT = re.compile(r"(?i)\b(?:goal|aim|objective|aspires?|ambition)s?\b")
_GOAL_WORDS = re.compile(r"(?i)\b(?:goals?|aim(?:s|ing)?|want(?:s|ed)?|wanna|would like|'d like|hope|hoping|"
                         r"plan(?:ning)? to|trying to|try to|dream|wish|objective|ambition|working towards?)\b")


def invented_goal(fact: str, source: str) -> bool:
    return bool(_GOAL_FACT.search(fact)) and not _GOAL_WORDS.search(source)


# A message that opens with a verb in its base form tells the coach to do something ("Schedule a
# 30 minute practice on Thursday"); a fact that the learner did it ("The learner scheduled a
# 30-minute practice on Thursday.", the extractor's reading) turns the request into news.
_OPENING_WORD = re.compile(r"(?i)^\W*(?:(?:please|pls|ok|okay|hey|coach|so)\W+)*([a-z]+)\s+"
                           r"(?:a|an|the|my|me|us|some|this|that|it|\d+)\b")  # the verb, then its object
_NOT_A_VERB = {"i", "im", "my", "me", "we", "the", "a", "an", "this", "that", "it", "its", "there", "today",
               "yesterday", "tomorrow", "just", "still", "also", "maybe", "no", "yes", "not", "finally"}


def done_as_asked(fact: str, source: str) -> bool:
    """The fact says the learner did what the message, in the imperative, asked to be done."""
    match = _OPENING_WORD.match(source)
    verb = match.group(1).lower() if match else ""
    if len(verb) < 3 or verb in _NOT_A_VERB or verb.endswith(("ing", "ed", "s")):
        return False
    return bool(re.search(rf"(?i)\b{re.escape(verb.rstrip('e'))}\w*ed\b", fact))


# Words that carry no content when two texts are compared ("learner" included: every fact says it).
STOP_WORDS = {"the", "learner", "learner's", "a", "an", "and", "or", "of", "to", "in", "on", "for", "is", "are",
              "was", "be", "by", "with", "at", "it", "their", "they", "them", "his", "her", "he", "she", "that",
              "this", "about", "has", "have", "had", "wants", "want", "likes", "like", "prefers", "can", "only"}


def grounded(fact: str, source: str, *, min_share: float = 0.5) -> bool:
    """Is the fact supported by the source message's words? At least `min_share` of the fact's
    content words (stop words and "learner" excluded; matched on a 5-letter stem) must occur in the
    source. A cheap code check against a small model inventing facts or copying the prompt example."""
    stem = lambda w: w[:5]  # noqa: E731 - tiny local helper
    fact_words = {stem(w) for w in words(fact) if w not in STOP_WORDS and len(w) > 2}
    if not fact_words:
        return False
    source_words = {stem(w) for w in words(source)}
    return len(fact_words & source_words) / len(fact_words) >= min_share


# A turn of a conversation is stored as "<speaker>: <text>"; the prefix says who said it.
_SPEAKER = re.compile(r"^\s*([A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2})\s*:\s")
# Capitalised words that name nothing (sentence starts, pronouns, greetings, days and months
# are common words here: a new *name* is what makes a statement distinct).
NOT_NAMES = {"i", "i'm", "i've", "i'll", "i'd", "the", "a", "an", "and", "but", "so", "oh", "ok", "okay", "yes",
              "no", "hi", "hey", "wow", "haha", "we", "my", "it", "this", "that", "you", "he", "she", "they",
              "what", "how", "when", "why", "who", "thanks", "sorry", "good", "great", "just", "also", "learner"}
_CAPWORD = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z'-]+")


def speaker_of(text: str) -> str | None:
    m = _SPEAKER.match(text)
    return m.group(1) if m else None


def without_speaker(text: str) -> str:
    """The statement without its "<speaker>:" prefix."""
    return _SPEAKER.sub("", text, count=1)


def names_in(text: str) -> set[str]:
    """Capitalised names in a statement (not the speaker prefix, not sentence starts), casefolded."""
    return {w.casefold() for w in _CAPWORD.findall(without_speaker(text)) if w.casefold() not in NOT_NAMES}


def validate_embedding(vector: Any, *, dim: int) -> list[float]:
    if not isinstance(vector, list | tuple) or len(vector) != dim:
        raise ApplicationError(f"embedding must be a list of {dim} numbers", code="invalid_embedding",
                               field="embedding")
    # The usual input, finite floats (what JSON and the serializers give), is checked in one pass
    # (0.2 ms a vector, 20 ms of a 100-item batch, the number-by-number way); any other input
    # takes the loop below, with the same result and errors as always.
    if all(type(x) is float for x in vector) and all(map(math.isfinite, vector)):
        if not any(vector):
            raise ApplicationError("embedding is all zeros", code="invalid_embedding", field="embedding")
        return list(vector)
    out: list[float] = []
    for x in vector:
        if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(float(x)):
            raise ApplicationError("embedding contains a non-finite or non-numeric value (NaN/inf)",
                                   code="invalid_embedding", field="embedding")
        out.append(float(x))
    if not any(out):
        raise ApplicationError("embedding is all zeros", code="invalid_embedding", field="embedding")
    return out


def validate_query(query: Any) -> str:
    if not isinstance(query, str) or not query.strip():
        raise ApplicationError("query is required", code="invalid_query", field="q")
    if len(query) > conf.QUERY_MAX_CHARS:
        raise ApplicationError(f"query is longer than {conf.QUERY_MAX_CHARS} characters", code="query_too_long",
                               field="q")
    return clean_text(query)


def chunk_text(text: str, *, limit: int = conf.FACT_MAX_CHARS) -> list[str]:
    """Split free text into ≤ limit-char passages at sentence (then word) boundaries."""
    text = clean_text(text)
    sentences = re.split(r"(?<=[.!?])\s+", text)
    chunks: list[str] = []
    current = ""
    for sentence in sentences:
        while len(sentence) > limit:
            cut = sentence[:limit].rsplit(" ", 1)[0] or sentence[:limit]
            if current:
                chunks.append(current)
                current = ""
            chunks.append(cut)
            sentence = sentence[len(cut):].strip()
        if not sentence:
            continue
        if current and len(current) + 1 + len(sentence) > limit:
            chunks.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}".strip()
    if current:
        chunks.append(current)
    return chunks


# --- decay and tiers ------------------------------------------------------------------------------
def decay_score(last_accessed_at: datetime, now: datetime) -> float:
    """max(0.3, exp(-0.05 × days since last access)): recency fades, but never below the floor,
    so an old fact still ranks (constants in memory.conf)."""
    days = max(0.0, (now - last_accessed_at).total_seconds() / 86400.0)
    return max(conf.DECAY_FLOOR, math.exp(-conf.DECAY_LAMBDA * days))


def tier_for(decay: float) -> str:
    if decay >= conf.TIER_HOT_MIN:
        return "hot"
    if decay >= conf.TIER_WARM_MIN:
        return "warm"
    return "cold"


def tier_age_days(min_decay: float) -> float:
    """Days since access at which decay falls below `min_decay` (the inverse of the curve)."""
    return -math.log(min_decay) / conf.DECAY_LAMBDA


# --- words and numbers of a statement -------------------------------------------------------------
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_NUMBER_WORDS = {"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
                 "eight": "8", "nine": "9", "ten": "10", "twelve": "12", "twenty": "20", "thirty": "30"}


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.casefold().replace("’", "'")))


def numbers(text: str) -> set[str]:
    low = text.casefold()
    found = {n.replace(",", ".") for n in _NUMBER.findall(low)}
    found |= {_NUMBER_WORDS[w] for w in words(low) if w in _NUMBER_WORDS}
    return found


# --- entities -------------------------------------------------------------------------------------
def canonical_entity(text: str) -> str:
    """Per-learner canonical name: NFKC, casefold, whitespace collapsed, edge punctuation removed."""
    s = unicodedata.normalize("NFKC", text).casefold()
    s = _WS.sub(" ", s).strip()
    return s.strip(" \t.,;:!?\"'()[]{}")


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    text: str
    label: str
    score: float


def validate_spans(source: str, spans: list[Any], *, labels: list[str] | None = None) -> tuple[list[Span], int]:
    """Keep only spans that are an exact substring of `source` at their offsets (and non-empty,
    with a canonical name and an allowed label). Returns (kept, dropped count). This is the rule
    that makes "no mention outside its source text, ever" hold whatever the model returns."""
    kept: list[Span] = []
    dropped = 0
    for sp in spans:
        try:
            start, end = int(sp.start), int(sp.end)
            text, label = str(sp.text), str(sp.label)
            score = float(sp.score)
        except (AttributeError, TypeError, ValueError):
            dropped += 1
            continue
        ok = (0 <= start < end <= len(source) and source[start:end] == text and text.strip() != ""
              and canonical_entity(text) != "" and (labels is None or label in labels)
              and math.isfinite(score))
        if not ok:
            dropped += 1
            continue
        kept.append(Span(start, end, text, label, min(1.0, max(0.0, score))))
    return kept, dropped


# --- read path escaping ---------------------------------------------------------------------------
_ROLE_TAG = re.compile(
    r"<\|[^|>]{0,40}\|>|</?\s*(system|assistant|user|tool|instructions?|im_start|im_end|s|inst)\b[^>]{0,40}>"
    r"|\[/?(INST|SYS)\]|<<\s*/?SYS\s*>>",
    re.IGNORECASE,
)
_ROLE_PREFIX = re.compile(r"(?i)\b(system|assistant|user|developer)\s*:")
_FENCE = re.compile(r"`{3,}|~{3,}|<<<|>>>")


def neutralise(text: str) -> str:
    """Make stored text inert inside a prompt: drop chat-template tokens and role tags, defuse
    "system:"-style prefixes and fence markers, flatten to one line. The caller then quotes it."""
    s = clean_text(text)
    s = _ROLE_TAG.sub("", s)
    s = _ROLE_PREFIX.sub(lambda m: f"{m.group(1)} -", s)
    s = _FENCE.sub("'", s)
    return _WS.sub(" ", s).strip()
