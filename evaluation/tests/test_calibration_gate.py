"""`manage.py evaluate --baseline` lets judge scores decide a verdict only for a judge whose stored
calibration (`manage.py judge_calibrate`) passes the gate on every dimension. The model here is a
SCRIPTED FAKE (`ScriptedFakeJudge`), not a judge: it replays fixed answers so the gate's control
flow is tested, never a judge's quality."""

import json

import pytest
from django.core.management import call_command

from core.llm.providers.fake import Scripted
from evaluation.models import EvalRun, EvalSet
from evaluation.selectors import judge_calibration_for
from evaluation.services.calibration import JUDGE_CALIBRATION_FILE, judge_calibrate
from evaluation.services.runs import run_config, run_create, run_execute
from evaluation.services.sets import rubric_load_file

pytestmark = pytest.mark.django_db

KEYS = ["naturalness", "continuity", "strategy", "premature_advice", "tone"]
HAND = {(i["learner_text"], i["reply"]): i["scores"] for i in json.loads(JUDGE_CALIBRATION_FILE.read_text())["items"]}
SHORT = "That sounds like real progress. What felt different this time?"
SLUGS = ["swim-off-career", "barrier-no-time", "memory-recall-progress"]


class ScriptedFakeJudge:
    """SCRIPTED FAKE model. Coach calls get one short reply. Judge calls on a calibration item
    answer the hand scores (`calibration = "hand"`) or 4 everywhere (`"constant"`, no ranking at
    all); judge calls on a replayed reply give every dimension `reply_score`."""

    def __init__(self) -> None:
        self.calibration = "hand"
        self.reply_score = 5

    def __call__(self, request):
        if request.schema is None:
            return Scripted(text=SHORT)
        user = request.messages[-1]["content"]
        said = user.split("LEARNER SAYS\n", 1)[1].split("\n\nREPLY\n", 1)[0]
        reply = user.split("\n\nREPLY\n", 1)[1].rsplit("\n\nGive JSON", 1)[0]
        hand = HAND.get((said, reply))
        if hand is None:
            scores = dict.fromkeys(KEYS, self.reply_score)
        else:
            scores = hand if self.calibration == "hand" else dict.fromkeys(KEYS, 4)
        return Scripted(text=json.dumps({k: {"score": v, "reason": "scripted"} for k, v in scores.items()}))


@pytest.fixture
def fake_judge(fake_llm):
    judge = ScriptedFakeJudge()
    fake_llm.default = judge
    return judge


def _baseline() -> EvalRun:
    config = run_config(slugs=SLUGS, model="fake:coach", judge_model="fake:judge")
    return run_execute(run=run_create(eval_set=EvalSet.objects.get(name="core", version=1), config=config))


def _evaluate(baseline: EvalRun, tmp_path) -> tuple[int, dict]:
    out = tmp_path / "evaluate.json"
    args = ["--set", "core", "--model", "fake:coach", "--judge-model", "fake:judge",
            "--baseline", str(baseline.public_id), "--json", str(out)]
    for slug in SLUGS:
        args += ["--slug", slug]
    try:
        call_command("evaluate", *args)
        code = 0
    except SystemExit as exc:
        code = exc.code
    return code, json.loads(out.read_text())["comparison"]


def test_evaluate_lets_the_judge_decide_only_after_a_calibration_that_passes_the_gate(fake_judge, tmp_path):
    baseline = _baseline()
    # Same coach replies (identical checks), but the judge now scores every reply 1 instead of 5.
    fake_judge.reply_score = 1

    code, comparison = _evaluate(baseline, tmp_path)  # never calibrated
    judge = comparison["deltas"]["judge"]
    assert code == 0 and comparison["verdict"] == "ok"
    assert judge["trusted"] is False and judge["why_not"] == ["no judge calibration result for this judge"]
    assert any(r.startswith("dimension tone mean 5.00 → 1.00") for r in judge["ignored_reasons"])

    fake_judge.calibration = "constant"
    below = judge_calibrate(rubric=rubric_load_file(), judge_model="fake:judge")
    assert below["trusted"] is False and below["complete"] is True
    code, comparison = _evaluate(baseline, tmp_path)  # calibrated, below the gate
    assert code == 0 and comparison["verdict"] == "ok"
    assert comparison["deltas"]["judge"]["trusted"] is False
    assert any("Spearman n/a" in w for w in comparison["deltas"]["judge"]["why_not"])

    fake_judge.calibration = "hand"
    call_command("judge_calibrate", "--judge-model", "fake:judge")
    code, comparison = _evaluate(baseline, tmp_path)  # the newest calibration passes the gate
    assert code == 2 and comparison["verdict"] == "regression"
    assert comparison["deltas"]["judge"]["trusted"] is True
    assert any(r.startswith("dimension tone mean 5.00 → 1.00") for r in comparison["reasons"])
    # The checks alone saw no change: the regression is the judge's.
    assert all(not r.startswith("check ") for r in comparison["reasons"])


def test_only_a_complete_calibration_of_the_same_judge_and_rubric_counts(fake_judge):
    rubric = rubric_load_file()
    assert judge_calibration_for(judge_model="fake:judge", rubric=rubric) is None
    partial = judge_calibrate(rubric=rubric, judge_model="fake:judge", limit=30)
    assert partial["trusted"] is True and partial["complete"] is False
    assert judge_calibration_for(judge_model="fake:judge", rubric=rubric) is None
    full = judge_calibrate(rubric=rubric, judge_model="fake:judge")
    assert judge_calibration_for(judge_model="fake:judge", rubric=rubric) == full["agreement"]
    assert judge_calibration_for(judge_model="fake:other-judge", rubric=rubric) is None
    stored = EvalRun.objects.get(public_id=full["run_id"])
    assert stored.config["kind"] == "judge calibration" and stored.summary["trusted"] is True
    assert stored.eval_set.name == "judge-calibration" and stored.judge_calls == full["items"]


def test_the_newest_calibration_wins(fake_judge):
    rubric = rubric_load_file()
    judge_calibrate(rubric=rubric, judge_model="fake:judge")
    fake_judge.calibration = "constant"
    newer = judge_calibrate(rubric=rubric, judge_model="fake:judge")
    assert judge_calibration_for(judge_model="fake:judge", rubric=rubric) == newer["agreement"]


def test_conversations_are_never_added_to_the_calibration_set(fake_judge, rf, django_user_model):
    from django.contrib.admin import site
    from django.contrib.messages.storage.fallback import FallbackStorage

    from coaching.models import Conversation
    from evaluation.admin import EvalRunAdmin, add_conversations_to_eval_set
    from evaluation.models import Transcript

    judge_calibrate(rubric=rubric_load_file(), judge_model="fake:judge", limit=3)
    assert EvalSet.objects.order_by("-created_at").first().name == "judge-calibration"  # the newest set
    core = EvalSet.objects.get(name="core", version=1)
    request = rf.post("/")
    request.user = django_user_model.objects.create_superuser(username="s3", password="p")
    request.session = {}
    request._messages = FallbackStorage(request)
    real = _baseline().replies.first().conversation_id
    add_conversations_to_eval_set(EvalRunAdmin(EvalRun, site), request, Conversation.objects.filter(pk=real))
    assert Transcript.objects.get(frozen_from_conversation_id=real).eval_set == core


def test_a_calibration_the_model_could_not_answer_is_incomplete_and_unlocks_nothing(fake_judge):
    """Seen on a loaded machine: five judge timeouts opened the circuit breaker and 102 of 105 items
    were reported as the judge's invalid answers. Control flow only (FAKE judge that is down)."""
    from core.llm import LLMOverloaded

    rubric = rubric_load_file()
    judge_calibrate(rubric=rubric, judge_model="fake:judge")  # a good calibration on record
    good = judge_calibration_for(judge_model="fake:judge", rubric=rubric)

    def down(*args, **kwargs):
        raise LLMOverloaded("circuit breaker for fake is open")

    result = judge_calibrate(rubric=rubric, judge_model="fake:judge", chat_fn=down)
    assert result["complete"] is False and result["trusted"] is False
    assert result["unavailable_items"] == result["items"]
    assert "got no answer from the model" in result["why_not"][0]
    assert all(a["invalid"] == 0 and a["n"] == 0 for a in result["agreement"].values())  # none counted as invalid
    assert judge_calibration_for(judge_model="fake:judge", rubric=rubric) == good  # the good one still decides
