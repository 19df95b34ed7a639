"""The reading evaluation's harness: a labelled item's context is built as a turn builds it (options
with their sessions), and what counts as a write. Pure: no database, no model."""

from datetime import datetime

from coaching.turn.reading.types import Reading, Value
from evaluation.reading import context_of, writes


def _item(summaries):
    return {"context": {"step": "done", "pending": {"kind": "plan", "options": [
        {"label": label, "summary": summary} for label, summary in summaries]}}}


def test_options_given_by_their_summary_get_the_sessions_code_would_offer():
    ctx = context_of(_item([("A", "4 sessions of 30 min (Mon-Thu at 07:00)"),
                            ("B", "2 sessions of 60 min (Sat, Sun at 09:00)")]))
    days = [{datetime.fromisoformat(s["start"]).weekday() for s in o["sessions"]} for o in ctx.options]
    assert days == [{0, 1, 2, 3}, {5, 6}]
    assert ctx.pending_kind == "plan"


def test_an_option_without_a_day_in_its_summary_gets_no_sessions():
    ctx = context_of(_item([("A", "3 sesiones de 30 min (lun, mié, vie)")]))
    assert "sessions" not in ctx.options[0]


def test_an_unsettled_reading_writes_nothing():
    value = Value(value="learn piano", span="learn piano", source="rules")
    assert writes(Reading("answer", {"goal": value}, settled=False)) == {}
    assert writes(Reading("answer", {"goal": value}, settled=True)) == {"goal": "learn piano"}


def test_the_language_is_scored_apart_from_the_slots():
    from evaluation.reading import Score

    score = Score(mode="rules")
    told = {"lang": Value(value="pt", span="", source="rules")}
    score.add({"id": "a", "message": "m", "expect": {"act": "other", "values": {"lang": "pt"}}},
              Reading("other", told, source="rules"), 1.0)
    score.add({"id": "b", "message": "m", "expect": {"act": "other", "values": {"lang": "es"}}},
              Reading("other", {}, source="rules"), 1.0)
    score.add({"id": "c", "message": "hello there", "expect": {"act": "other", "values": {}}},
              Reading("other", told, source="rules"), 1.0)
    assert (score.languages_right, score.languages_labelled) == (1, 2)
    assert score.english_told_other == [("c", "hello there", "pt")] and score.row()["slot_exact"] == 0.0
