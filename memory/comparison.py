"""Rules that compare two statements, for ingest and consolidation: does the new one only say
again what the older one says (`restates`), is it a statement of its own however similar
(`distinct_reason`), does it contradict it (`conflict_reason`, and `surprise_reason`, the stricter
form ingest flags). Pure functions over text (the words, numbers, speaker and names come from
`memory.rules`); the cosine thresholds they are used with are in `memory.conf`."""

from __future__ import annotations

import re

from memory import rules


def restates(old: str, new: str, *, min_share: float = 0.8) -> bool:
    """Does `new` only say again (part of) what `old` says? At least `min_share` of new's content
    words (same stems and stop words as `rules.grounded`; at least two of them) occur in old, and new
    brings no number old lacks. Seen on replays: "The learner freezes and forget every word." vs
    "The learner is nervous when I have to speak, I freeze and forget every word." — cosine 0.81,
    under the 0.90 near-duplicate line, yet nothing new. Used only together with a cosine of at
    least BLOOM_MEMORY_SURPRISE_COSINE and no conflict (see memory.services.dedup)."""
    new_words = _content_stems(new)
    if len(new_words) < 2 or not rules.numbers(new) <= rules.numbers(old):
        return False
    old_words = {w[:5] for w in rules.words(old)}
    return len(new_words & old_words) / len(new_words) >= min_share


def distinct_reason(old: str, new: str) -> str | None:
    """Why `new` is a statement of its own even when it is very similar to `old` (it must be
    stored, not merged), or None. Measured on long two-person conversations: at cosine ≥ 0.90 a
    turn of one speaker was merged into the other speaker's turn, and changed numbers or names
    were folded away, leaving the newer text unsearchable.
      other_speaker: both carry a "<speaker>:" prefix and the speakers differ;
      new_number: new mentions a number old does not;
      new_name: new mentions a capitalised name (not at a sentence start) old does not;
      new_words: new does not restate old (`restates`, the speakers' names left out) — close in
        meaning, yet it says something old does not ("Winter is my favourite season by far" after
        "My favourite season is summer": cosine 0.93). A merge is a restatement or nothing."""
    so, sn = rules.speaker_of(old), rules.speaker_of(new)
    if so and sn and so.casefold() != sn.casefold():
        return "other_speaker"
    if not rules.numbers(new) <= rules.numbers(old):
        return "new_number"
    old_words = rules.words(old)
    if {n for n in rules.names_in(new) if n not in old_words}:
        return "new_name"
    bare_old, bare_new = rules.without_speaker(old), rules.without_speaker(new)
    if len(_content_stems(bare_new)) >= 2 and not restates(bare_old, bare_new):
        return "new_words"
    return None


def _content_stems(text: str) -> set[str]:
    """Content words as 5-letter stems (stop words and words of two letters or fewer left out)."""
    return {w[:5] for w in rules.words(text) if w not in rules.STOP_WORDS and len(w) > 2}


# Phrases that place a statement at one occasion ("I slept five hours last night"): two such
# statements with other numbers are two occasions, not a changed value. Rates ("a week", "every
# morning") are not occasions.
_EPISODIC = re.compile(r"\b(today|tonight|yesterday|just|ago|earlier today|(this|last) (morning|evening|night|"
                       r"week|weekend|month|year|time))\b")
_TIME_WORDS = {"today", "tonight", "yesterday", "morning", "evening", "night", "week", "weekend", "days", "weeks",
               "hours", "months", "years", "lately", "minutes", "again", "finally"}


def same_subject(old: str, new: str) -> bool:
    """Are two similar statements about the same thing, so that a conflict between them means
    something changed? They must share at least two content words, or one that is at least half
    of the shorter one's content words (5-letter stems; stop words, small-talk words, negations
    and the opposite-pair words themselves excluded). Measured on long conversations:
    cosine ≥ 0.75 alone paired "Hi! Always have a minute for you." with "Hi hi, long time no
    talk!" (negation mismatch) and "Good night!" with "Good morning!"; 0 of 40 sampled flags were
    real changes."""
    skip = rules.STOP_WORDS | _NEGATIONS | _SMALL_TALK | _TIME_WORDS | {w for pair in _OPPOSITES for w in pair}
    stem = lambda w: w[:5]  # noqa: E731 - tiny local helper
    body = rules.without_speaker  # the speaker is not the subject
    wo = {stem(w) for w in rules.words(body(old)) if w not in skip and len(w) > 2}
    wn = {stem(w) for w in rules.words(body(new)) if w not in skip and len(w) > 2}
    shared = len(wo & wn)
    return shared >= 2 or (shared >= 1 and shared >= 0.5 * min(len(wo), len(wn)))


_SMALL_TALK = {"good", "great", "nice", "fine", "okay", "hi", "hey", "hello", "bye", "thanks", "sorry", "haha", "wow",
               "you", "your", "yours", "our", "we're", "i'm", "i've", "i'll", "it's", "that's", "there's", "what",
               "how", "got", "get", "just", "really", "very", "too", "much", "all", "one", "time", "way", "thing",
               "some", "next", "soon", "talk", "minute", "take", "care", "know", "think", "well", "lot", "day"}


# A past-tense verb also places a statement at one occasion ("I baked cookies and ate five",
# "it has rained for four days"): seen on the benchmark as changed-value flags between two
# retellings of small talk. "-ed" words that are not past verbs are listed.
_PAST_IRREGULAR = {"ate", "found", "went", "had", "was", "were", "got", "made", "took", "ran", "saw", "did", "came",
                   "bought", "told", "said", "left", "won", "lost", "met", "gave", "sold", "wrote", "slept", "drove"}
_NOT_PAST = {"need", "feed", "bed", "red", "seed", "speed", "tired", "bored", "interested", "excited", "scared",
             "worried", "married", "used", "based", "related", "advanced", "limited", "detailed", "supposed"}
# Interjections that contain a negation word but deny nothing ("No way!", "Oh no, ...").
_INTERJECTION = re.compile(r"\b(no way|oh no|no worries|no judgement|no problem|no idea)\b")


def episodic(text: str) -> bool:
    """Does the statement tell one occasion (a time word such as "today", "last night", or a
    verb in the past tense)?"""
    low = text.casefold()
    if _EPISODIC.search(low):
        return True
    return any(w in _PAST_IRREGULAR or (w.endswith("ed") and len(w) > 4 and w not in _NOT_PAST)
               for w in rules.words(low))


def surprise_reason(old: str, new: str) -> str | None:
    """The conflict rule for ingest: conflict_reason (interjections such as "No way!" deny
    nothing), only between statements about the same subject by the same speaker, and a changed
    number only when neither tells one occasion."""
    so, sn = rules.speaker_of(old), rules.speaker_of(new)
    if so and sn and so.casefold() != sn.casefold():
        return None
    reason = conflict_reason(_INTERJECTION.sub(" ", old.casefold()), _INTERJECTION.sub(" ", new.casefold()))
    if reason is None or not same_subject(old, new):
        return None
    if reason == "changed_value" and (episodic(old) or episodic(new)):
        return None
    if reason == "negation_mismatch" and negated_claim(old, new) is None:
        return None
    return reason


# Clauses: split at sentence and clause punctuation, dashes and the conjunctions that join two
# claims. A negation denies the claim of its own clause, not of the whole turn.
_CLAUSE = re.compile(r"[.!?;,:]+\s*|\s+-+\s+|\s+(?:but|so|and|because)\s+")
# Grammatical person: closed word classes, not phrases.
_FIRST_PERSON = {"i", "i'm", "i've", "i'll", "i'd", "my", "me", "mine", "myself"}
_SECOND_PERSON = {"you", "your", "yours", "yourself", "you're", "you've", "you'll", "you'd", "ya", "let's"}


def negated_claim(old: str, new: str) -> tuple[str, str] | None:
    """The two clauses, one of each statement, where one denies what the other asserts, or None.
    Measured on long two-person conversations (memory/README.md, "Surprise flags"): a negation
    anywhere in a turn of several sentences against anything similar flagged 174 pairs, none of
    them a contradiction (hand-labelled): "Don't give up!" (to the other person) against "I'm
    gonna keep chasing my dreams", "Long time no talk" against "Hey, what's up?". So both clauses
    must be about the speaker (in dialogue, "<Name>: ...", a clause in the first person and none
    in the second; a fact without a speaker, as the coach's extraction writes them, is about the
    learner), exactly one of them negated, and their content words (5-letter stems, stop words,
    small talk, negations and pronouns left out) must overlap by at least half of the larger
    clause's: the same claim, denied."""
    dialogue = rules.speaker_of(old) is not None or rules.speaker_of(new) is not None
    skip = rules.STOP_WORDS | _NEGATIONS | _SMALL_TALK | _TIME_WORDS | _FIRST_PERSON | _SECOND_PERSON | {
        w for pair in _OPPOSITES for w in pair}

    def clauses(text: str) -> list[tuple[str, bool, set[str]]]:
        out = []
        for clause in _CLAUSE.split(rules.without_speaker(text).replace("’", "'")):
            words = rules.words(clause)
            if not words or words & _SECOND_PERSON or (dialogue and not words & _FIRST_PERSON):
                continue
            out.append((clause.strip(), _negated(clause), {w[:5] for w in words if w not in skip and len(w) > 2}))
        return out

    for a, a_neg, a_words in clauses(old):
        for b, b_neg, b_words in clauses(new):
            shared = a_words & b_words
            if a_neg != b_neg and shared and len(shared) >= 0.5 * max(len(a_words), len(b_words)):
                return a, b
    return None


# --- the surprise rule ----------------------------------------------------------------------------
# A new fact is a *surprise* when it is very similar to an existing one (cosine ≥ surprise_cosine)
# AND one of these deterministic conflict tests fires:
#   1. negation mismatch: exactly one of the two contains a negation word or says that something
#      ceased ("stopped practising", "quit running", "gave up flashcards": a habit that ended
#      contradicts the habit, seen missed in a client trial; "stopped by" is a visit, not an end);
#   2. opposite preference: one uses a word from a pair and the other its opposite
#      (like/dislike, love/hate, prefer/avoid, morning/evening, easy/hard, ...);
#   3. changed value: both mention numbers and the sets of numbers differ.
# The rule is code, not model: it is cheap, testable and explainable. It can miss paraphrased
# contradictions; the offline consolidation pass is where a model could confirm more.
_NEGATIONS = {"not", "no", "never", "nobody", "nothing", "none", "neither", "nor", "cannot", "without",
              "don't", "doesn't", "didn't", "isn't", "aren't", "wasn't", "weren't", "won't", "can't",
              "couldn't", "shouldn't", "wouldn't", "haven't", "hasn't", "hadn't", "dont", "doesnt",
              "didnt", "isnt", "cant", "wont", "no longer", "anymore"}
_OPPOSITES = [
    ("like", "dislike"), ("likes", "dislikes"), ("love", "hate"), ("loves", "hates"), ("enjoy", "hate"),
    ("enjoys", "hates"), ("prefer", "avoid"), ("prefers", "avoids"), ("morning", "evening"),
    ("morning", "night"), ("mornings", "evenings"), ("easy", "hard"), ("easy", "difficult"),
    ("more", "less"), ("early", "late"), ("before", "after"), ("weekday", "weekend"),
    ("weekdays", "weekends"), ("alone", "group"), ("short", "long"), ("fast", "slow"),
    ("increase", "decrease"), ("started", "stopped"), ("start", "stop"), ("passed", "failed"),
    ("confident", "anxious"), ("motivated", "unmotivated"), ("best", "worst"),
]


_CEASED = re.compile(r"\b(?:stopped|stopping|quit|quitting|gave up|given up|giving up)\b(?!\s+by\b)")


def _negated(text: str) -> bool:
    low = text.casefold().replace("’", "'")
    words = rules.words(low)
    return bool(words & _NEGATIONS) or "no longer" in low or low.endswith("n't") or bool(_CEASED.search(low))


def conflict_reason(old: str, new: str) -> str | None:
    """Why `new` contradicts `old` (a rule name), or None. See the rule above. A negation is
    compared clause by clause too (negated_claim) when both statements, or neither, carry one
    somewhere: "I'm vegetarian, I haven't eaten meat in years" and "I'm not vegetarian anymore, I
    started eating meat again" both carry a negation, and the near-duplicate rule (cosine 0.93)
    folded the newer into the older (written contradictions, memory/eval_data/contradictions_v1.json)."""
    if _negated(old) != _negated(new) or negated_claim(old, new) is not None:
        return "negation_mismatch"
    wo, wn = rules.words(old), rules.words(new)
    for a, b in _OPPOSITES:
        if (a in wo and b in wn and b not in wo and a not in wn) or (b in wo and a in wn and a not in wo
                                                                     and b not in wn):
            return f"opposite:{a}/{b}"
    no, nn = rules.numbers(old), rules.numbers(new)
    if no and nn and no != nn:
        return "changed_value"
    return None
