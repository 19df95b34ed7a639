"""Which language a message is in, told by code (a language identifier), not by counting English
function words and not by the model. Pure (no database)."""

import pytest

from coaching.turn.reading.language import language_of, looks_foreign


@pytest.mark.parametrize("text,code", [
    ("oi! quero aprender a tocar violão", "pt"),  # an English-looking "a" in it
    ("hm fiz sim, só 15 minutos", "pt"),
    ("Je veux apprendre la guitare", "fr"),
    ("Ich habe heute nicht geübt", "de"),
    ("voglio imparare a cucinare", "it"),
    ("Мне нужно выучить английский", "ru"),
    ("韓国語を勉強しています", "ja"),  # no spaces between its words
    ("Jag vill lära mig spela gitarr", "sv"),
])
def test_a_message_in_another_language_is_told_by_code(text, code):
    assert language_of(text) == code and looks_foreign(text)


@pytest.mark.parametrize("text", [
    "20 mins tue thu sat",  # no English function word in it
    "nope, skipped it today",
    "AI stuff, mostly LLMs",
    "k-pop dance covers",
    "lol idk maybe 3 hrs",  # slang: no language is clearly more likely
    "gym was closed again smh",
    "i wanna run a half marathon",  # "wanna" scored Hausa before the languages were narrowed
    "i wanna learn guitar",
    "4 x 25min (pomodoro style)",
])
def test_english_without_its_function_words_is_english(text):
    assert language_of(text) == "en" and not looks_foreign(text)


@pytest.mark.parametrize("text", ["ok", "hola!", "sim", "woodworking / furniture", "learn inglês"])
def test_too_few_words_to_tell_is_no_language(text):
    assert language_of(text) is None and not looks_foreign(text)
