"""Judge output parsing and the retry-once-then-invalid rule, with the SCRIPTED FAKE model behind
the real `core.llm.chat` facade (so provider-side schema validation is exercised too)."""

import json

from evaluation import judge

KEYS = ["naturalness", "continuity", "strategy", "premature_advice", "tone"]
DIMS = [{"key": k, "question": f"{k}?", "anchors": {"1": "bad", "3": "meh", "5": "good"}} for k in KEYS]


def scores_json(**overrides):
    body = {k: {"score": 4, "reason": f"{k} ok"} for k in KEYS}
    for k, v in overrides.items():
        body[k] = v
    return json.dumps(body)


def call(fake_model_name="fake:judge"):
    messages = judge.build_pointwise_messages(dimensions=DIMS, profile_line="Goal: swim", history=[],
                                              learner_text="hi", reply_text="Hello!", expected_behaviour="greet")
    return judge.call_judge(messages=messages, keys=KEYS, schema=judge.pointwise_schema(KEYS),
                            parse=judge.parse_pointwise, model=fake_model_name, temperature=0.0, seed=7,
                            max_tokens=300)


def test_parse_pointwise_accepts_integer_scores_and_rejects_out_of_range_and_non_integers():
    raw = {"naturalness": {"score": 5, "reason": "r"}, "continuity": {"score": 0, "reason": "r"},
           "strategy": {"score": 4.5, "reason": "r"}, "premature_advice": {"score": True, "reason": "r"},
           "tone": {"score": "3", "reason": "r"}}
    scores, problems = judge.parse_pointwise(raw, KEYS)
    assert scores["naturalness"].score == 5 and not scores["naturalness"].invalid
    assert scores["tone"].score == 3  # "3" is an integer in disguise
    for bad in ("continuity", "strategy", "premature_advice"):
        assert scores[bad].invalid and scores[bad].score is None
    assert len(problems) == 3


def test_parse_pointwise_not_json_or_missing_dimension():
    scores, problems = judge.parse_pointwise("sure! naturalness is 4", KEYS)
    assert all(s.invalid for s in scores.values()) and problems
    scores, problems = judge.parse_pointwise({"naturalness": {"score": 4, "reason": "x"}}, KEYS)
    assert not scores["naturalness"].invalid and scores["tone"].invalid
    assert any("tone" in p for p in problems)


def test_parse_pairwise_maps_preferences():
    raw = {k: {"better": b, "reason": ""} for k, b in zip(KEYS, ["A", "b", "tie", "C", None], strict=True)}
    scores, problems = judge.parse_pairwise(raw, KEYS)
    assert [scores[k].score for k in KEYS[:3]] == [1, -1, 0]
    assert scores["premature_advice"].invalid and scores["tone"].invalid and len(problems) == 2


def test_valid_first_answer_is_one_call(fake_llm):
    fake_llm.push(scores_json())
    outcome = call()
    assert outcome.attempts == 1 and outcome.calls == 1
    assert {k: s.score for k, s in outcome.scores.items()} == dict.fromkeys(KEYS, 4)
    req = fake_llm.requests[0]
    assert req.options["temperature"] == 0.0 and req.options["seed"] == 7
    assert req.schema["properties"]["tone"]["properties"]["score"]["maximum"] == 5


def test_malformed_then_valid_is_retried_once_with_a_corrective_note(fake_llm):
    fake_llm.push("this is not json", scores_json(tone={"score": 2, "reason": "cold"}))
    outcome = call()
    assert outcome.attempts == 2
    assert outcome.scores["tone"].score == 2 and not any(s.invalid for s in outcome.scores.values())
    assert len(fake_llm.requests) == 2
    assert "previous answer was invalid" in fake_llm.requests[1].messages[-1]["content"]


def test_out_of_range_twice_is_recorded_invalid_never_a_score(fake_llm):
    # The provider's schema check rejects 7; the retry says 0 — also out of range.
    fake_llm.push(scores_json(tone={"score": 7, "reason": "great"}), scores_json(tone={"score": 0, "reason": "x"}))
    outcome = call()
    assert outcome.attempts == 2 and len(fake_llm.requests) == 2
    assert all(s.invalid and s.score is None for s in outcome.scores.values())
    assert any("attempt 2" in e for e in outcome.errors)
    assert fake_llm.pending() == 0  # exactly one retry, no third call


def test_a_dimension_invalid_in_code_after_retry_stays_invalid_while_others_count(fake_llm):
    # Shape passes the schema (score is an integer) only when validated loosely: feed the parser
    # through a chat_fn that returns parsed objects, as an Ollama server without grammar might.
    class Result:
        def __init__(self, parsed):
            self.parsed, self.text = parsed, json.dumps(parsed)

    answers = [json.loads(scores_json(strategy={"score": 9, "reason": "x"})),
               json.loads(scores_json(strategy={"score": 6, "reason": "x"}))]
    calls = []

    def chat_fn(messages, **kwargs):
        calls.append(kwargs)
        return Result(answers[len(calls) - 1])

    messages = judge.build_pointwise_messages(dimensions=DIMS, profile_line="", history=[], learner_text="hi",
                                              reply_text="Hello", expected_behaviour="")
    outcome = judge.call_judge(messages=messages, keys=KEYS, schema=judge.pointwise_schema(KEYS),
                               parse=judge.parse_pointwise, model=None, temperature=0.0, seed=1, max_tokens=100,
                               chat_fn=chat_fn)
    assert len(calls) == 2 and calls[0]["operation"] == "judge"
    assert outcome.scores["strategy"].invalid and outcome.scores["strategy"].score is None
    assert outcome.scores["tone"].score == 4 and not outcome.scores["tone"].invalid
