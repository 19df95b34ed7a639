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


def test_a_wrong_write_the_turn_asks_about_first_is_counted_apart():
    """A report only the model read is offered before it is logged: still a wrong write, but not
    one written unasked. The same report read by the rules, or an onboarding answer a model read,
    is written at once."""
    from evaluation.reading import Score

    done = Value(value="completed", span="", source="model")
    report = {"id": "a", "message": "m", "context": {"step": "done"},
              "expect": {"act": "report", "values": {"outcome": "skipped"}}}
    score = Score(mode="combined")
    score.add(report, Reading("report", {"outcome": done}, source="model"), 1.0)
    score.add({**report, "id": "b"}, Reading("report", {"outcome": done}, source="rules"), 1.0)
    hours = Value(value=3.0, span="3", source="model")
    score.add({"id": "c", "message": "m", "context": {"step": "weekly_hours"},
               "expect": {"act": "answer", "values": {"weekly_hours": 2}}},
              Reading("answer", {"weekly_hours": hours}, source="model"), 1.0)
    assert len(score.wrong_writes) == 3 and score.row()["wrong_unasked"] == 2


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


def test_each_shipped_labelled_set_is_well_formed():
    """Both sets (v1, and v2 written after the reader by a session that never saw its code) load,
    and every act, slot and reference in them is one the harness scores."""
    from coaching.turn.reading.types import ACTS, SLOTS
    from evaluation.reading import SET_PATH, load

    for path in sorted(SET_PATH.parent.glob("reading_v*.json")):
        items = load(path)
        assert len({i["id"] for i in items}) == len(items) > 200, path
        for item in items:
            want, ctx = item["expect"], item["context"]
            assert want["act"] in ACTS and set(want.get("values", {})) <= set(SLOTS), item["id"]
            if "session" in want.get("values", {}):
                assert want["values"]["session"] in {s["ref"] for s in ctx["plan"]}, item["id"]
            if want.get("values", {}).get("option", "none") != "none":
                assert want["values"]["option"] in {o["label"] for o in ctx["pending"]["options"]}, item["id"]
            context_of(item)  # builds


def test_evaluate_reading_refuses_a_set_that_is_not_there(tmp_path):
    import pytest
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="no labelled set at"):
        call_command("evaluate_reading", "--modes", "rules", "--set", str(tmp_path / "missing.json"))
