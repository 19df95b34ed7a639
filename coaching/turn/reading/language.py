"""Which language a learner's message is in, as far as code needs to know: English, which the rules
read, or another, which they do not (the model reads it, the coach says what it understood and
answers in English).

A language identifier scores the message: py3langid, a naive Bayes model over byte n-grams that
ships with the package (no download, ~0.05 ms a message), restricted to the languages the coach's
models read (`_SCORED`). A message is in another language when it has enough text to judge —
three words, or a few characters of a script written without spaces — and its most likely
language is at least twice as likely as English and at least 0.2 likely (slang like "lol idk
maybe 3 hrs" spreads its likelihood thinly over many languages: no reading of another language,
so the rules and the model read it as English). Counting
English function words, as this module replaced, called "40 mins mon wed fri" foreign (none of
them in it) and "quero aprender a tocar violão" English (its "a"). How it scores on the labelled
reading set: docs/coach-quality.md, "Thirteenth run"."""

from __future__ import annotations

import functools
import re

ENGLISH = "en"
_WORDS = re.compile(r"[^\W\d_]{2,}")
# Kana, CJK ideographs and Hangul: scripts written without spaces between words.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_MIN_WORDS = 3
_MIN_UNSPACED = 4
_LEAD_OVER_ENGLISH = 2.0
_LEAST_LIKELIHOOD = 0.2


# The languages scored: those the chat models Bloom ships read and write (Qwen2.5 names about 30;
# these are its list and their close neighbours), not all 97 the identifier knows. English slang
# spreads its likelihood onto languages no learner of this coach writes in ("i wanna learn guitar"
# scored as Hausa, ahead of English); among these, it is English.
_SCORED = ("en", "zh", "fr", "es", "pt", "de", "it", "ru", "ja", "ko", "vi", "th", "ar", "nl", "pl", "tr", "sv", "id",
           "cs", "da", "fi", "el", "he", "hi", "hu", "no", "ro", "uk", "ms", "ca", "bn", "fa", "bg", "hr", "sk", "sl",
           "lt", "lv", "et", "sr", "tl", "ur")


@functools.cache
def _identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages(list(_SCORED))
    return identifier


# The rules, the settling of a proposal and the reader each ask about the same message: it is
# identified once.
@functools.lru_cache(maxsize=256)
def language_of(text: str) -> str | None:
    """The message's language as an ISO 639-1 code, "en" unless another is clearly more likely, or
    None when it is too short to tell ("ok", "la b", "hola!")."""
    if len(_WORDS.findall(text)) < _MIN_WORDS and len(_UNSPACED.findall(text)) < _MIN_UNSPACED:
        return None
    ranked = _identifier().rank(text)
    top, likelihood = ranked[0]
    english = next((p for code, p in ranked if code == ENGLISH), 0.0)
    clear = likelihood >= _LEAST_LIKELIHOOD and likelihood >= _LEAD_OVER_ENGLISH * english
    return top if top != ENGLISH and clear else ENGLISH


def looks_foreign(text: str) -> bool:
    """Long enough to tell, and not English."""
    return language_of(text) not in (None, ENGLISH)
