"""The judge calibration set and the agreement gate. The judge here is the SCRIPTED FAKE model
behind the real core.llm facade: these tests check the arithmetic and the gate, not a judge."""

import json

import pytest

from core.llm.providers.fake import Scripted
from evaluation.compare import Thresholds
from evaluation.services.calibration import JUDGE_CALIBRATION_FILE, judge_calibrate
from evaluation.services.sets import rubric_load_file

KEYS = ["naturalness", "continuity", "strategy", "premature_advice", "tone"]
DATA = json.loads(JUDGE_CALIBRATION_FILE.read_text())


def test_calibration_file_is_a_hand_scored_judge_calibration_set_of_at_least_100_replies():
    assert DATA["kind"] == "judge calibration set" and "calibration" in DATA["description"]
    assert len(DATA["items"]) >= 100
    assert len({i["id"] for i in DATA["items"]}) == len(DATA["items"])
    for item in DATA["items"]:
        assert set(item["scores"]) == set(KEYS)
        assert all(isinstance(v, int) and 1 <= v <= 5 for v in item["scores"].values())
    # Every dimension uses the whole scale, so rank agreement is measurable.
    for key in KEYS:
        assert {i["scores"][key] for i in DATA["items"]} >= {1, 3, 5}


@pytest.mark.django_db
def test_a_judge_that_always_says_4_is_below_threshold(fake_llm):
    rubric = rubric_load_file()
    fake_llm.default = lambda request: Scripted(text=json.dumps({k: {"score": 4, "reason": "fine"} for k in KEYS}))
    result = judge_calibrate(rubric=rubric, judge_model="fake:judge", limit=20)
    assert result["items"] == 20 and result["trusted"] is False
    assert all(a["spearman"] is None for a in result["agreement"].values())  # constant judge: no ranking
    assert any("Spearman n/a" in w for w in result["why_not"])


@pytest.mark.django_db
def test_a_judge_that_reproduces_the_hand_scores_is_trusted(fake_llm):
    rubric = rubric_load_file()
    by_reply = {(i["learner_text"], i["reply"]): i["scores"] for i in DATA["items"]}

    def answer(request):
        user = request.messages[-1]["content"]
        said = user.split("LEARNER SAYS\n", 1)[1].split("\n\nREPLY\n", 1)[0]
        reply = user.split("\n\nREPLY\n", 1)[1].rsplit("\n\nGive JSON", 1)[0]
        hand = by_reply[(said, reply)]
        return Scripted(text=json.dumps({k: {"score": v, "reason": "hand"} for k, v in hand.items()}))

    fake_llm.default = answer
    result = judge_calibrate(rubric=rubric, judge_model="fake:judge")
    assert result["trusted"] is True and result["items"] == len(DATA["items"])
    t = Thresholds()
    assert all(a["spearman"] == 1.0 and a["exact"] == 1.0 >= t.judge_min_exact for a in result["agreement"].values())


def test_a_file_without_the_calibration_header_is_refused(tmp_path, db):
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"kind": "eval set", "items": []}))
    with pytest.raises(ValueError, match="not a judge calibration set"):
        judge_calibrate(rubric=rubric_load_file(), path=bad)
