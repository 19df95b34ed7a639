"""Intent parsers (pure): a session report is told apart from a question, a plan request and a
reschedule request before anything is written. Examples are messages that were misread
before these rules ("can we move the sessions I missed?" wrote a skip)."""

import pytest

from coaching.turn.reading.intent import PLAN, QUESTION, REPORT, RESCHEDULE, UNDO, parse_intent, pick_choice


@pytest.mark.parametrize("text,kind", [
    ("I missed two sessions, can we move them?", RESCHEDULE),
    ("can we move the sessions I missed?", RESCHEDULE),
    ("I skipped tuesday, could we reschedule it?", RESCHEDULE),
    ("push my session back to friday", RESCHEDULE),
    ("should I skip today?", QUESTION),
    ("did you log my session?", QUESTION),
    ("what if I miss one?", QUESTION),
    ("I might skip tomorrow", "other"),
    ("let's plan my week", PLAN),
    ("I did my session today", REPORT),
    ("skipped it, too tired", REPORT),
    ("I missed yesterday's session", REPORT),
    ("done!", REPORT),
    ("did 20 minutes of pushing practice", REPORT),
    ("undo", UNDO),
    ("no, I didn't", UNDO),
    ("no I didn't do it", UNDO),
    ("that's wrong", UNDO),
])
def test_kinds(text, kind):
    assert parse_intent(text).kind == kind


@pytest.mark.parametrize("text,outcome,reference,weekday,count", [
    ("I did my session today", "completed", "today", None, None),
    ("I missed yesterday's session", "skipped", "yesterday", None, None),
    ("skipped tuesday's practice", "skipped", "weekday", 1, None),
    ("I skipped both sessions", "skipped", "all", None, 2),
    ("I missed two sessions this week", "skipped", "all", None, 2),
    ("I did it", "completed", "", None, None),
])
def test_report_reference(text, outcome, reference, weekday, count):
    intent = parse_intent(text)
    assert (intent.kind, intent.outcome, intent.reference, intent.weekday, intent.count) == (
        REPORT, outcome, reference, weekday, count)


@pytest.mark.parametrize("text,expected", [
    ("yes", 0), ("sure", 0), ("sounds good", 0), ("option B", 1), ("b", 1), ("the second one", 1),
    ("the second one sounds less scary", 1), ("first", 0), ("the last one", 1), ("hmm, not sure", None),
    ("what?", None), ("sí", 0), ("ja, passt", 0), ("👍", 0), ("oui", 0),
])
def test_pick_choice(text, expected):
    assert pick_choice(text, ["A", "B"]) == expected


def test_pick_choice_by_day_name():
    assert pick_choice("the tuesday one", ["A", "B"], [frozenset({0}), frozenset({1})], frozenset({1})) == 1
    # a day both options have picks neither; a day only one has picks it
    both = [frozenset({1, 3}), frozenset({1, 5})]
    assert pick_choice("tuesday works", ["A", "B"], both, frozenset({1})) is None
    assert pick_choice("saturday works", ["A", "B"], both, frozenset({5})) == 1


@pytest.mark.parametrize("text,expected", [
    ("B!!", 1), ("la b", 1), ("A but at 8pm instead", 0), ("hmm A i guess? thursdays are tough tho", 0),
    ("go with A, and could you make it 45 min instead?", 0), ("B. wait no, A", 0), ("A or B", None),
    ("A session on Monday would be better", None), ("a", 0), ("I'd like a longer one", None),
])
def test_pick_choice_by_a_label_written_alone(text, expected):
    assert pick_choice(text, ["A", "B"]) == expected


def test_several_days_pick_an_option_only_when_they_are_its_days():
    """"only Tuesdays and Saturdays" is no pick of an option on Tuesday, Thursday and Saturday: the
    learner asks for other days (whatever weekday today is, so whatever days the options fall on)."""
    tue_thu_sat, mon_wed = frozenset({1, 3, 5}), frozenset({0, 2})
    assert pick_choice("only Tuesdays and Saturdays at 14:00", ["A", "B"], [tue_thu_sat, mon_wed],
                       frozenset({1, 5})) is None
    assert pick_choice("tuesday thursday saturday works", ["A", "B"], [tue_thu_sat, mon_wed],
                       frozenset({1, 3, 5})) == 0
    assert pick_choice("the saturday one", ["A", "B"], [tue_thu_sat, mon_wed], frozenset({5})) == 0
