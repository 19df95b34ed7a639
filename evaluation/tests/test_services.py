"""Runs end to end through the REAL coaching engine (routing, onboarding gate, guard, persistence),
with the SCRIPTED FAKE model producing the words, so control flow, storage, summaries and
comparisons are tested without model time. Model behaviour itself is tested in test_real_model."""

import json
import uuid

import pytest
from django.core.management import call_command

from core.llm.providers.fake import Scripted
from evaluation.models import Comparison, EvalRun, EvalSet, JudgeScore, ReplyResult, Rubric, Transcript
from evaluation.services.comparisons import comparison_create
from evaluation.services.pairwise import pairwise_execute
from evaluation.services.runs import run_config, run_create, run_execute
from evaluation.services.sets import eval_set_load_file, transcript_freeze_from_conversation

pytestmark = pytest.mark.django_db

SHORT = "That sounds like real progress. What felt different this time?"
VERBOSE = ("## Your complete plan\n**Here is everything:**\n" + "\n".join(
    f"- **Tip {i}:** practise a little every single day and keep a detailed log of every session you do"
    for i in range(12)))
PAIRWISE_A_BETTER = json.dumps({k: {"better": "A", "reason": "first"} for k in
                                ["naturalness", "continuity", "strategy", "premature_advice", "tone"]})


def judge_json(score=4):
    return json.dumps({k: {"score": score, "reason": "ok"} for k in
                       ["naturalness", "continuity", "strategy", "premature_advice", "tone"]})


def scripted_model(request):
    """FAKE model: judge calls (JSON schema) get scores, pairwise always prefers whatever is shown
    first (pure position bias), coach calls answer verbosely only when the system prompt asks."""
    if request.schema is not None:
        if "better" in json.dumps(request.schema):
            return Scripted(text=PAIRWISE_A_BETTER)
        return Scripted(text=judge_json())
    system = " ".join(m["content"] for m in request.messages if m["role"] == "system")
    return Scripted(text=VERBOSE if "thorough" in system else SHORT)


@pytest.fixture
def fake_model(fake_llm):
    fake_llm.default = scripted_model
    return fake_llm


SLUGS = ["swim-off-career", "barrier-no-time", "memory-recall-progress"]


def execute(**overrides):
    eval_set = EvalSet.objects.get(name="core", version=1)
    config = run_config(slugs=SLUGS, **overrides)
    return run_execute(run=run_create(eval_set=eval_set, config=config))


def test_shipped_set_is_loaded_by_migration_and_reload_is_idempotent():
    eval_set = EvalSet.objects.get(name="core", version=1)
    transcripts = list(eval_set.transcripts.all())
    assert len(transcripts) >= 30
    tags = {t for tr in transcripts for t in tr.tags}
    assert {"onboarding", "barrier", "continuity", "off-career-goal", "premature-advice-bait", "verbosity-bait",
            "calendar-honesty-bait", "memory-recall"} <= tags
    assert all(tr.learner_turns and tr.expected_behaviour for tr in transcripts)
    assert sum(1 for tr in transcripts if tr.starting_profile.get("onboarding_step") != "done") >= 4
    assert Rubric.objects.get(version=1).dimension_keys == ["naturalness", "continuity", "strategy",
                                                            "premature_advice", "tone"]
    eval_set_load_file()
    call_command("load_eval_set")
    assert Transcript.objects.filter(eval_set=eval_set).count() == len(transcripts)
    assert EvalSet.objects.filter(name="core").count() == 1


def test_transcripts_new_in_the_shipped_file_are_added_and_edited_ones_kept():
    """An install migrated before a transcript was shipped evaluated without it, silently (seen on
    2026-12-04): `evaluate` adds the file's new transcripts and leaves staff's edits alone."""
    from evaluation.services.sets import eval_set_add_new_from_file

    eval_set = EvalSet.objects.get(name="core")
    shipped = Transcript.objects.filter(eval_set=eval_set).count()
    Transcript.objects.filter(eval_set=eval_set, slug="onboard-swap-and-per-evening").delete()
    Transcript.objects.filter(eval_set=eval_set, slug="swim-off-career").update(expected_behaviour="edited by staff")
    assert eval_set_add_new_from_file() == 1
    assert eval_set_add_new_from_file() == 0
    assert Transcript.objects.filter(eval_set=eval_set).count() == shipped
    assert Transcript.objects.get(eval_set=eval_set, slug="swim-off-career").expected_behaviour == "edited by staff"


def test_run_replays_through_the_engine_checks_and_judges_every_reply(fake_model):
    run = execute(model="fake:coach", judge_model="fake:judge", repeats=2)
    assert run.status == EvalRun.Status.DONE
    replies = list(run.replies.all())
    assert len(replies) == 5  # 2 + 2 + 1 learner turns
    assert all(r.engine == "coaching" and r.trace_id and r.reply_text for r in replies)
    assert all(set(r.checks) >= {"scaffold_leak", "over_length", "goal_drift"} for r in replies)
    # Every chat call of the engine went to the run's model, not the default.
    coach_requests = [q for q in fake_model.requests if q.schema is None]
    assert coach_requests and {q.model for q in coach_requests} == {"coach"}
    # (The reader's proposals, asked for on the separate "reader" queue, are no judge calls.)
    judge_requests = [q for q in fake_model.requests if q.schema is not None and q.model != "reader"]
    assert {q.model for q in judge_requests} == {"judge"}
    assert {q.options["seed"] for q in judge_requests} == {7, 8}  # seed + repeat index
    assert JudgeScore.objects.filter(reply__run=run).count() == 5 * 5 * 2
    s = run.summary
    assert s["dimensions"]["tone"] == {"mean": 4.0, "stdev": 0.0, "n": 10, "invalid": 0}
    assert s["reliability"]["self_agreement"]["identical_share"] == 1.0
    assert run.judge_calls == 10 and run.model_calls >= 5
    assert s["model_calls_per_transcript"] > 0
    # Fresh learners with their starting profile; the memory snapshot went in via memory's services.
    from coaching.models import Conversation

    conv = Conversation.objects.get(pk=replies[0].conversation_id)
    assert conv.learner.profile.goal_category == "sport"
    assert not [n for n in s["notes"] if "skipped" in n], s["notes"]


def test_prompt_change_that_makes_replies_longer_is_caught_by_checks_and_comparison(fake_model):
    baseline = execute(model="fake:coach", judge=False)
    candidate = execute(model="fake:coach", judge=False, prompt_version="verbose-demo")
    b, c = baseline.summary, candidate.summary
    # The guard trims the reply the learner sees, but the model's own output is checked too.
    assert c["raw_check_rates"]["over_length"] == 1.0 and b["raw_check_rates"]["over_length"] == 0.0
    assert c["raw_check_rates"]["format_density"] == 1.0
    assert c["check_means"]["over_length"] > b["check_means"]["over_length"]
    comparison = comparison_create(baseline=baseline, candidate=candidate)
    assert comparison.verdict == "regression"
    assert any("raw:over_length" in r for r in comparison.reasons)
    # The other way round it is an improvement in length, not a regression. (It is one in the dodge
    # check: the short scripted reply, "That sounds like real progress. What felt different this
    # time?", answers a learner's question with words that do not touch it.)
    reverse = comparison_create(baseline=candidate, candidate=baseline)
    assert not any("over_length" in r or "format_density" in r for r in reverse.reasons)
    assert reverse.verdict == "ok" or all("dodge" in r for r in reverse.reasons)


def test_invalid_judge_output_is_stored_invalid_and_not_counted(fake_model):
    eval_set = EvalSet.objects.get(name="core", version=1)
    config = run_config(slugs=["memory-recall-progress"], model="fake:coach", judge_model="fake:judge")
    run = run_create(eval_set=eval_set, config=config)

    def bad_judge(request):
        if request.schema is not None:
            return Scripted(text=json.dumps({"naturalness": {"score": 9, "reason": "wow"}}))
        return Scripted(text=SHORT)

    fake_model.default = bad_judge
    run = run_execute(run=run)
    rows = list(JudgeScore.objects.filter(reply__run=run))
    assert len(rows) == 5 and all(r.invalid and r.score is None and r.attempts == 2 for r in rows)
    assert run.summary["judge_invalid"] == 5
    assert run.summary["dimensions"]["tone"]["mean"] is None
    assert run.judge_calls == 2


def test_pairwise_both_orders_position_bias_becomes_ties(fake_model):
    baseline = execute(model="fake:coach", judge=False)
    candidate = execute(model="fake:coach", judge=False, prompt_version="verbose-demo")
    pair = pairwise_execute(baseline=baseline, candidate=candidate, config={"judge_model": "fake:judge"})
    tone = pair.summary["pairwise"]["tone"]
    # The fake always prefers the first reply shown: both orders disagree → every item is a tie.
    assert tone["tie"] == 5 and tone["win"] == tone["loss"] == 0
    assert pair.summary["reliability"]["order_consistency"]["consistent_share"] == 0.0
    assert JudgeScore.objects.filter(pairwise_run=pair, order="ab").count() == 25
    assert JudgeScore.objects.filter(pairwise_run=pair, order="ba").count() == 25


def test_evaluate_command_exits_non_zero_on_regression(fake_model, tmp_path):
    baseline = execute(model="fake:coach", judge=False)
    out = tmp_path / "run.json"
    with pytest.raises(SystemExit) as exc:
        call_command("evaluate", "--set", "core", "--model", "fake:coach", "--no-judge", "--prompt-version",
                     "verbose-demo", "--slug", SLUGS[0], "--slug", SLUGS[1], "--slug", SLUGS[2],
                     "--baseline", str(baseline.public_id), "--json", str(out))
    assert exc.value.code == 2
    data = json.loads(out.read_text())
    assert data["comparison"]["verdict"] == "regression"
    # Runs by their public id only, in the comparison and in the export.
    assert data["comparison"]["baseline"] == str(baseline.public_id) and "id" not in data["comparison"]
    assert data["run"]["run"]["id"] == data["comparison"]["candidate"] != str(baseline.public_id)
    assert len(data["run"]["replies"]) == 5
    assert Comparison.objects.filter(baseline=baseline).count() == 1
    # Same configuration as the baseline: no regression, exit 0.
    call_command("evaluate", "--set", "core", "--model", "fake:coach", "--no-judge", "--slug", SLUGS[0],
                 "--slug", SLUGS[1], "--slug", SLUGS[2], "--baseline", str(baseline.public_id))


def test_freeze_real_conversation_into_a_set(fake_model):
    from coaching import services as coaching
    from core.identity import services as identity_services
    client = identity_services.api_client_create(name="acme")
    learner = coaching.learner_create(client=client)
    coaching.profile_update(learner=learner, primary_goal="learn to swim", goal_category="sport", weekly_hours=2,
                            best_time="morning", confidence=4)
    conversation = coaching.conversation_start(learner=learner)
    from coaching.turn import turn_run

    for i, text in enumerate(["swam 200m today", "what next?"]):
        message, _ = coaching.message_receive(conversation=conversation, content=text, idempotency_key=f"k{i}")
        turn_run(message=message)
    eval_set = EvalSet.objects.get(name="core")
    transcript = transcript_freeze_from_conversation(conversation_id=conversation.pk, eval_set_id=eval_set.pk)
    assert [t["text"] for t in transcript.learner_turns] == ["swam 200m today", "what next?"]
    # "swam 200m today" reports a practice (no session is planned): logged as such after the reply.
    assert transcript.learner_turns[0]["original_reply"] == (
        f"{SHORT}\n\nLogged: a practice you did (not linked to a planned session). Say “undo” if that's not right.")
    assert transcript.starting_profile["goal_category"] == "sport"
    assert transcript.frozen_from_conversation_id == conversation.pk
    # Idempotent, and frozen: later messages don't change the stored transcript.
    coaching.message_receive(conversation=conversation, content="later", idempotency_key="k9")
    again = transcript_freeze_from_conversation(conversation_id=conversation.pk, eval_set_id=eval_set.pk)
    assert again.pk == transcript.pk and len(again.learner_turns) == 2


def test_export_api_is_staff_only_and_admin_report_renders(fake_model, client, django_user_model):
    run = execute(model="fake:coach", judge_model="fake:judge")
    url = f"/api/v1/evaluation/runs/{run.public_id}/export"
    user = django_user_model.objects.create_user(username="u", password="p")
    client.force_login(user)
    assert client.get(url).status_code == 403
    staff = django_user_model.objects.create_superuser(username="s", password="p")
    client.force_login(staff)
    response = client.get(url)
    assert response.status_code == 200
    body = response.json()
    assert body["run"]["id"] == str(run.public_id) and len(body["replies"]) == 5
    assert body["replies"][0]["checks"]["scaffold_leak"]["flag"] is False
    assert client.get(f"/api/v1/evaluation/runs/{uuid.uuid4()}/export").status_code == 404
    # The integer key is no route: the 404 every client route gives an integer, in the error shape.
    by_key = client.get(f"/api/v1/evaluation/runs/{run.pk}/export")
    assert by_key.status_code == 404 and "UUID" in by_key.json()["error"]["message"], by_key.content
    page = client.get(f"/admin/evaluation/evalrun/{run.pk}/report/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "<svg" in html and "Goal-category drift" in html and "swim-off-career" in html
    for name in ("evalset", "transcript", "rubric", "evalrun", "comparison", "replyresult", "judgescore"):
        assert client.get(f"/admin/evaluation/{name}/").status_code == 200


def test_admin_action_adds_conversations_to_the_newest_set(fake_model, rf, django_user_model):
    from django.contrib.admin import site
    from django.contrib.messages.storage.fallback import FallbackStorage

    from coaching import services as coaching
    from coaching.models import Conversation
    from core.identity import services as identity_services
    from evaluation.admin import EvalRunAdmin, add_conversations_to_eval_set

    learner = coaching.learner_create(client=identity_services.api_client_create(name="acme"))
    conversation = coaching.conversation_start(learner=learner)
    coaching.message_receive(conversation=conversation, content="I want to learn guitar", idempotency_key="a")
    request = rf.post("/")
    request.user = django_user_model.objects.create_superuser(username="s2", password="p")
    request.session = {}
    request._messages = FallbackStorage(request)
    add_conversations_to_eval_set(EvalRunAdmin(EvalRun, site), request, Conversation.objects.filter(pk=conversation.pk))
    assert Transcript.objects.filter(frozen_from_conversation_id=conversation.pk).count() == 1
    assert ReplyResult.objects.count() == 0
    # The action is offered on the coaching Conversation admin.
    assert "add_conversations_to_eval_set" in site.get_model_admin(Conversation).get_actions(request)


def test_recheck_recomputes_checks_from_stored_replies_without_model_calls(fake_model):
    from evaluation.services.checking import run_recheck

    run = execute(model="fake:coach", judge=False)
    reply = run.replies.order_by("pk").first()
    reply.reply_text = "The learner's goal is to swim. " + reply.reply_text
    reply.checks = {**reply.checks, "third_person": {"flag": False, "value": 0.0, "detail": ""}}
    reply.save()
    calls_before = len(fake_model.requests)
    run = run_recheck(run=run)
    reply.refresh_from_db()
    assert reply.checks["third_person"]["flag"] and "learner" in reply.checks["third_person"]["detail"]
    assert run.summary["check_rates"]["third_person"] == 0.2
    assert len(fake_model.requests) == calls_before


def test_summary_reports_the_sentence_repeat_rate_like_the_other_rates(fake_model):
    repeating = "Nice work on the swim today. What felt different? Nice work on the swim today."

    def coach_repeats_itself(request):
        return Scripted(text=judge_json()) if request.schema is not None else Scripted(text=repeating)

    fake_model.default = coach_repeats_itself
    run = execute(model="fake:coach", judge=False)
    s = run.summary
    # The model's own output repeated a sentence in every reply, whatever the guard then showed.
    assert s["raw_check_rates"]["sentence_repeat"] == 1.0
    assert "sentence_repeat" in s["check_rates"]
    fake_model.default = scripted_model
    clean = execute(model="fake:coach", judge=False)
    assert clean.summary["raw_check_rates"]["sentence_repeat"] == 0.0
    # ...and a comparison counts it like any other check.
    comparison = comparison_create(baseline=clean, candidate=run)
    assert comparison.verdict == "regression"
    assert any(r.startswith("check raw:sentence_repeat rate 0.00 → 1.00") for r in comparison.reasons)


def test_the_judge_is_the_configured_judge_model_and_the_coach_stays_on_bloom_llm(fake_model, settings):
    """BLOOM_JUDGE_LLM names the judge when a run names none; the coach stays on BLOOM_LLM. Unset,
    the judge is BLOOM_LLM too. (SCRIPTED FAKE provider: control flow only.)"""
    from core.env import ModelSpec

    settings.BLOOM_JUDGE_LLM = ModelSpec("fake", "judge-from-setting")
    run = execute(repeats=1)
    assert run.config["judge_model"] == "fake:judge-from-setting" and run.config["model"] == "fake:scripted"
    assert {q.model for q in fake_model.requests if q.schema is not None and q.model != "reader"} == {
        "judge-from-setting"}
    assert {q.model for q in fake_model.requests if q.schema is None} == {"scripted"}
    settings.BLOOM_JUDGE_LLM = None
    assert run_config()["judge_model"] == "fake:scripted"
