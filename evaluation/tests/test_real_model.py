"""Smoke test with the REAL embedded model (Qwen2.5-Coder-0.5B via llama.cpp): one short
transcript (2 learner turns) replayed through the real coaching engine and judged by the real
model. Kept to a handful of calls; full-set runs belong to `manage.py evaluate` / bench."""

import pytest

from evaluation.models import EvalRun, EvalSet, JudgeScore
from evaluation.services.runs import run_config, run_create, run_execute

pytestmark = pytest.mark.django_db


@pytest.mark.timeout(1200)  # a few calls; generous only because the CI box may be shared
def test_replay_and_judge_one_transcript_with_the_real_model():
    from django.conf import settings

    from core.llm.assets import chat_model_path

    if not chat_model_path(settings.BLOOM_LLM.model).exists():
        pytest.skip("embedded model not assembled (run `manage.py bloom_models`)")
    eval_set = EvalSet.objects.get(name="core", version=1)
    # Room for the small judge's five reasons: at 260 tokens its JSON was cut mid-reason.
    config = run_config(slugs=["continuity-option-b"], judge_max_tokens=400)
    run = run_execute(run=run_create(eval_set=eval_set, config=config))

    assert run.status == EvalRun.Status.DONE
    replies = list(run.replies.order_by("turn_index"))
    assert [r.learner_text for r in replies] == ["option B", "cool, what should I draw on tuesday?"]
    assert all(r.engine == "coaching" and r.reply_text.strip() and not r.error for r in replies)
    assert all(r.model_calls >= 1 and r.raw_texts for r in replies)
    scores = list(JudgeScore.objects.filter(reply__run=run))
    assert len(scores) == 2 * 5
    # Whatever the small judge said, nothing outside 1–5 is ever stored as a score.
    assert all((s.score is None) == s.invalid for s in scores)
    assert all(1 <= s.score <= 5 for s in scores if s.score is not None)
    assert any(s.score is not None for s in scores), [s.reason for s in scores]
    assert run.judge_calls >= 2
    # Every judge call is a telemetry row marked as a judge operation.
    from telemetry.models import ModelCall

    assert ModelCall.objects.filter(operation="judge").count() == run.judge_calls
    assert ModelCall.objects.filter(trace_id__in=[r.trace_id for r in replies]).exclude(operation="judge").count() \
        == sum(r.model_calls for r in replies)
