"""Small talk and uncertainty: greetings, filler, pleasantries and "not sure really" are never an
answer to an onboarding question, nor a profile value (the output checks use `is_small_talk` to
flag a greeting stored as a goal). Pure functions: text in, a verdict out."""

from __future__ import annotations

import re

from coaching.turn.reading.vocabulary import bare_words

GREETINGS = frozenset({
    "hi", "hello", "hey", "hiya", "heya", "yo", "sup", "howdy", "hallo", "hola", "bonjour", "greetings",
    "good morning", "good afternoon", "good evening", "hi there", "hello there",
    "hey there", "hey hey", "what's up", "whats up", "wassup", "how are you", "how r u", "how are you doing",
    "how's it going", "hows it going", "nice to meet you", "hi bloom", "hello bloom", "hey bloom",
    # and in the other languages learners write in
    "olá", "ola", "oi", "bom dia", "boa tarde", "boa noite", "buenas", "buenos días", "buenos dias",
    "buenas tardes", "buenas noches", "salut", "bonsoir", "ciao", "buongiorno", "buonasera", "guten morgen",
    "guten tag", "moin", "hoi", "goedemorgen", "hej", "cześć", "привет", "здравствуйте", "こんにちは", "merhaba",
})
FILLER = frozenset({
    "", "idk", "i dont know", "i don't know", "dunno", "not sure", "no idea", "skip", "pass", "next",
    "maybe", "whatever", "anything", "nothing", "n/a", "na", "none", "?", "hmm", "hm", "hmmm", "ok", "okay",
    "yes", "no", "sure", "later", "you decide", "you choose", "dont care", "don't care", "no clue",
    "something", "stuff", "idc", "meh", "k", "kk", "...", "-", "continue", "go on", "lol", "haha", "thanks",
    "thank you", "thx", "ty", "cool", "nice", "great", "awesome", "good", "fine", "yep", "yeah", "nope", "nah",
    "right", "alright", "oh", "ah", "uh", "um", "umm", "test", "testing", "hello?", "are you there",
    "things", "lots", "everything", "i guess", "not really", "good thanks", "fine thanks", "i'm good", "im good",
    "i'm fine", "im fine", "ready", "let's go", "lets go", "start", "begin", "help", "what", "why", "huh",
    "gn", "good night", "thank you so much", "thanks a lot", "much appreciated",
    # thanks in the other languages learners write in
    "obrigado", "obrigada", "gracias", "muchas gracias", "merci", "merci beaucoup", "danke", "danke dir",
    "danke schön", "vielen dank", "grazie", "grazie mille", "dank je", "dankjewel", "bedankt", "tack",
    "dziękuję", "спасибо", "ありがとう", "teşekkürler",
})


def _squeeze(word: str) -> str:
    return re.sub(r"(.)\1+", r"\1", word)


# A greeting typed long or short ("hii", "heyyy", "helloo"): the same word with its repeated letters
# squeezed is the greeting.
_SQUEEZED_GREETINGS = frozenset(_squeeze(g) for g in GREETINGS if " " not in g)


def _greeting_word(token: str) -> bool:
    return token in GREETINGS or _squeeze(token) in _SQUEEZED_GREETINGS


_PHRASES = sorted((p for p in GREETINGS | FILLER if " " in p), key=len, reverse=True)
_PHRASE = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(p) for p in _PHRASES) + r")(?!\w)")


def _small_talk_piece(piece: str) -> bool:
    norm = bare_words(piece)
    if norm in GREETINGS or norm in FILLER:
        return True
    # "hi bloom!", "hello hello", "hey, thanks", "good morning coach": greetings and filler only
    # (a phrase of several words counts as one).
    tokens = _PHRASE.sub(" hi ", norm).split()
    return bool(tokens) and all(_greeting_word(t) or t in FILLER or t in {"there", "bloom", "coach", "again"}
                                for t in tokens)


# A greeting of several words opening a message ("good evening coach"), as one opening word would.
_OPENING_GREETING = re.compile(r"^(?:" + "|".join(re.escape(g) for g in sorted((g for g in GREETINGS if " " in g),
                                                                              key=len, reverse=True)) + r")(?!\w)")


def is_greeting(text: str) -> bool:
    norm = bare_words(text)
    opens = bool(norm) and (_greeting_word(norm.split()[0]) or bool(_OPENING_GREETING.match(norm)))
    return norm in GREETINGS or (opens and _small_talk_piece(norm))


# Uncertainty is not an answer either: "not sure really", "I don't know yet", "no clue tbh" were
# stored as goals because only the bare phrases were in FILLER. A core phrase, optionally wrapped
# in softeners ("i'm", "honestly", "yet", "tbh", "to be honest"), and nothing else.
_SOFTENER = (r"(?:i'?m|i am|im|honestly|really|just|yet|tbh|tho|though|lol|haha|at all|to be honest|right now|"
             r"for now|at the moment|atm|about (?:it|that|this)|what i want|what to do|what to pick|sorry|hmm+|um+|"
             r"uh+|well|so|still|totally|kinda|kind of|quite|i guess|i think|either|either way|"
             r"of|sure|anything|in particular)")
_UNCERTAIN_CORE = (r"(?:not (?:really |quite |too |so )?sure|unsure|no (?:idea|clue)|not a clue|clueless|"
                   r"(?:i )?(?:do ?n[o']?t|dont|don't) know|dunno|idk|idc|"
                   r"(?:i )?(?:haven'?t|have not|havent) (?:decided|thought about it|figured (?:it|that) out)|"
                   r"not decided|undecided|can'?t decide|cannot decide|hard to say|no preference|"
                   r"nothing (?:in particular|specific|really)|whatever|anything(?: really)?|"
                   r"(?:i )?(?:do ?n[o']?t|dont|don't) (?:really )?(?:mind|care)|not certain|who knows|"
                   r"no (?:real )?goal|no goals?(?: yet)?|none really)")
_UNCERTAIN = re.compile(rf"^(?:{_SOFTENER}\s+)*{_UNCERTAIN_CORE}(?:\s+{_SOFTENER})*$")


def is_uncertain(text: str) -> bool:
    """'not sure really', 'I don't know yet', 'no clue', 'haven't decided', 'idk tbh'."""
    return bool(_UNCERTAIN.match(bare_words(text)))


def is_small_talk(text: str) -> bool:
    """A greeting, filler, pleasantry or bare uncertainty with nothing a profile could store. Split
    on sentence and clause marks so "hi! thanks" or "hello, ok" count too."""
    if is_uncertain(text):
        return True
    pieces = [p for p in re.split(r"[.!?,;\n]+", text) if p.strip()]
    if not pieces:
        return True
    return all(_small_talk_piece(p) or is_uncertain(p) for p in pieces)


def strip_greeting(text: str) -> str:
    """Drop a leading greeting ("hi!", "hello there,") so "hi, I want to learn Spanish" is a goal."""
    out = text.strip()
    for _ in range(3):
        match = re.match(r"(?i)^\s*([a-z' ]{1,24}?)\s*[!.,:;\-—–]+\s*", out)
        if match and bare_words(match.group(1)) in GREETINGS:
            out = out[match.end():]
            continue
        match = re.match(r"(?i)^\s*(hi|hello|hey|hiya|heya|yo|hola)\b\s*", out)
        if match and out[match.end():].strip():
            out = out[match.end():]
            continue
        break
    return out.strip()
