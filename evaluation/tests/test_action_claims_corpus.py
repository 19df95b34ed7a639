"""False positives of the honesty check (`coaching.turn.guard.find_false_claims`, whose write claims are
`coaching.turn.reply_checks.action_claims`), measured on every reply text the repository stores: the
judge calibration set's 157 replies (105 written to be scored, 52 drawn from real-model runs), the
coach replies frozen in the shipped set's transcripts, the engine's own templated text, and the
shipped set's expected flows. Read with no tool run in the turn, the strictest reading. Each text
that trips is listed below with why it is right to flag; any other text tripping fails here, naming
it. `pytest -s` prints the counts (docs/coach-quality.md)."""

import json

import pytest

from coaching.turn import guard
from evaluation.replay import engine_templates
from evaluation.services.sets import DATA_DIR, DEFAULT_SET_FILE

CALIBRATION = json.loads((DATA_DIR / "judge_calibration_v2.json").read_text())["items"]
SET = json.loads(DEFAULT_SET_FILE.read_text())["transcripts"]

REPLIES = ([(f"calibration:{i['id']}", i["reply"]) for i in CALIBRATION]
           + [(f"prior:{t['slug']}:{n}", m["text"]) for t in SET for n, m in enumerate(t.get("prior", []))
              if m["role"] == "coach"]
           + [(f"template:{n}", text) for n, text in enumerate(engine_templates())])
EXPECTED = [(f"expected:{t['slug']}", t["expected"]) for t in SET]

# Reviewed one by one. Every other stored text passes.
RIGHT_TO_FLAG = {
    # Hand-written false claims of the calibration set (strategy scored 2 and 1): no tool added
    # anything to a Google calendar or emailed anything.
    "calibration:s12-r4": "I've added all sessions to your Google calendar and emailed you the invites.",
    "calibration:s18-r2": "Yes, I've added it to your Google calendar.",
    # An expected flow quoting the defect it was written for.
    "expected:checkin-skip-no-schedule-promise": "a new set of sessions scheduled for the next week",
}


def _trips(text: str) -> list:
    return guard.find_false_claims(text, set())


@pytest.mark.parametrize("key,text", REPLIES + EXPECTED, ids=[k for k, _ in REPLIES + EXPECTED])
def test_stored_reply_trips_only_if_reviewed_as_a_false_claim(key, text):
    if key in RIGHT_TO_FLAG:
        assert RIGHT_TO_FLAG[key] in text and _trips(text), key
    else:
        assert _trips(text) == [], f"{key}: {text!r}"


def test_measurement_counts(capsys):
    replies = sum(bool(_trips(t)) for _, t in REPLIES)
    expected = sum(bool(_trips(t)) for _, t in EXPECTED)
    with capsys.disabled():
        print(f"\nhonesty check over stored texts: {replies} of {len(REPLIES)} replies/templates trip, "
              f"{expected} of {len(EXPECTED)} expected flows trip")
    assert replies == sum(k.startswith(("calibration:", "prior:", "template:")) for k in RIGHT_TO_FLAG)
    assert expected == sum(k.startswith("expected:") for k in RIGHT_TO_FLAG)


def test_evaluation_counts_the_claims_the_guard_blocks():
    """`unperformed_action` reads the model's words with the shared check: the defect is flagged in
    a check-in turn that ran log_checkin only, code's own promise line is not."""
    from evaluation.checks import CheckContext
    from evaluation.checks.behaviour import check_unperformed_action

    code = "Logged: a skipped practice (not linked to a planned session). Say “undo” if that's not right."
    defect = "Let's try again tomorrow with a new set of sessions scheduled for the next week."
    result = check_unperformed_action(f"{defect}\n{code}", CheckContext(tool_calls=("log_checkin",),
                                                                         template_texts=(code,)))
    assert result.flag and "schedule_session" in result.detail
    planner = "Reply “option A” or “option B” and I'll schedule it."
    ctx = CheckContext(template_texts=(planner,))
    assert not check_unperformed_action(f"Two good options for your week.\n{planner}", ctx).flag
