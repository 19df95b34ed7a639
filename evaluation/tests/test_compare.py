"""Comparison arithmetic and the regression verdict (decided in code from thresholds)."""

from evaluation.compare import (
    Thresholds,
    check_means,
    check_rates,
    compare_summaries,
    dimension_stats,
    judge_agreement,
    order_consistency,
    pairwise_resolve,
    pairwise_summary,
    self_agreement,
    spearman,
)

# A judge that agreed with the hand scores on the calibration set (only such a judge may
# decide a verdict; these tests of the judge-based reasons pass it explicitly).
TRUSTED = {"tone": {"spearman": 0.8, "exact": 0.7, "n": 105, "invalid": 0}}


def flags(**kw):
    return {name: {"flag": flag, "value": 1.0 if flag else 0.0, "detail": ""} for name, flag in kw.items()}


def test_check_rates_are_share_of_flagged_replies():
    rows = [flags(scaffold_leak=True, over_length=False), flags(scaffold_leak=False, over_length=False),
            flags(scaffold_leak=True, over_length=True), flags(scaffold_leak=False, over_length=False)]
    assert check_rates(rows) == {"over_length": 0.25, "scaffold_leak": 0.5}
    assert check_means([{"over_length": {"flag": False, "value": 10}}, {"over_length": {"value": 30}}]) == \
        {"over_length": 20.0}


def test_dimension_stats_exclude_invalid_from_mean():
    stats = dimension_stats([("tone", 4), ("tone", 2), ("tone", None), ("continuity", None)])
    assert stats["tone"] == {"mean": 3.0, "stdev": 1.0, "n": 2, "invalid": 1}
    assert stats["continuity"]["mean"] is None and stats["continuity"]["invalid"] == 1


def summary(rates, dims=None):
    return {"check_rates": rates, "dimensions": {k: {"mean": v, "n": 20} for k, v in (dims or {}).items()}}


def test_verdict_regression_when_check_rate_rises_by_threshold():
    result = compare_summaries(summary({"over_length": 0.05}), summary({"over_length": 0.15}))
    assert result.verdict == "regression"
    assert "over_length" in result.reasons[0]
    assert result.deltas["checks"]["over_length"]["delta"] == 0.1


def test_verdict_ok_just_below_threshold_and_when_rates_fall():
    assert compare_summaries(summary({"over_length": 0.05}), summary({"over_length": 0.14})).verdict == "ok"
    assert compare_summaries(summary({"scaffold_leak": 0.5}), summary({"scaffold_leak": 0.0})).verdict == "ok"


def test_verdict_on_dimension_mean_drop_needs_enough_valid_scores():
    base, cand = summary({}, {"tone": 4.2}), summary({}, {"tone": 3.6})
    result = compare_summaries(base, cand, judge_calibration=TRUSTED)
    assert result.verdict == "regression" and "tone" in result.reasons[0]
    assert compare_summaries(summary({}, {"tone": 4.2}), summary({}, {"tone": 3.8}),
                             judge_calibration=TRUSTED).verdict == "ok"
    few = {"check_rates": {}, "dimensions": {"tone": {"mean": 1.0, "n": 2}}}
    assert compare_summaries(base, few, judge_calibration=TRUSTED).verdict == "ok"  # 2 scores are not evidence


def test_thresholds_are_configurable_and_recorded():
    t = Thresholds(check_rate_increase=0.3)
    result = compare_summaries(summary({"emoji": 0.0}), summary({"emoji": 0.2}), thresholds=t)
    assert result.verdict == "ok"
    assert result.thresholds["check_rate_increase"] == 0.3


def test_the_judges_own_opinion_cannot_decide_the_verdict():
    # A summary carrying a judge "pass" flag is ignored: only numbers and thresholds count.
    base = {**summary({"scaffold_leak": 0.0}), "judge_pass": True}
    cand = {**summary({"scaffold_leak": 0.4}), "judge_pass": True}
    assert compare_summaries(base, cand).verdict == "regression"


def test_per_transcript_deltas():
    base = {**summary({}), "per_transcript": {"a": {"tone": 4.0}, "b": {"tone": 3.0}}}
    cand = {**summary({}), "per_transcript": {"a": {"tone": 2.5}, "c": {"tone": 5.0}}}
    assert compare_summaries(base, cand).deltas["per_transcript"] == {"a": {"tone": -1.5}}


def test_self_agreement_identical_share_and_mean_abs_deviation():
    items = [(("r1", "tone"), [4, 4, 4]), (("r2", "tone"), [3, 5, 4]), (("r3", "tone"), [2, None, None])]
    out = self_agreement(items)
    assert out["items"] == 2 and out["skipped"] == 1
    assert out["identical_share"] == 0.5
    assert out["mean_abs_deviation"] == round((0 + 0 + 0 + 1 + 1 + 0) / 6, 4)


def test_pairwise_disagreement_between_orders_is_a_tie():
    assert pairwise_resolve(1, 1) == 1
    assert pairwise_resolve(-1, -1) == -1
    assert pairwise_resolve(1, -1) == 0
    assert pairwise_resolve(1, None) is None
    assert order_consistency([(1, 1), (1, -1), (0, 0), (None, 1)]) == {"items": 3, "consistent_share": 0.6667}
    s = pairwise_summary([("tone", 1), ("tone", 0), ("tone", -1), ("tone", -1), ("tone", None)])
    assert s["tone"] == {"win": 1, "loss": 2, "tie": 1, "invalid": 1, "net": -0.25}


def test_pairwise_net_loss_is_a_regression():
    result = compare_summaries(summary({}), summary({}), pairwise={"tone": {"net": -0.5}}, judge_calibration=TRUSTED)
    assert result.verdict == "regression" and "pairwise tone" in result.reasons[0]


def test_mean_words_growth_is_a_verbosity_regression():
    base = {**summary({}), "check_means": {"over_length": 20.0}}
    longer = {**summary({}), "check_means": {"over_length": 31.0}}
    similar = {**summary({}), "check_means": {"over_length": 27.0}}
    result = compare_summaries(base, longer)
    assert result.verdict == "regression" and "mean words" in result.reasons[0]
    assert compare_summaries(base, similar).verdict == "ok"


# --- judge validity ---------------------------------------------------------------------------
def test_spearman_matches_known_values():
    assert spearman([1, 2, 3, 4, 5], [1, 2, 3, 4, 5]) == 1.0
    assert spearman([1, 2, 3, 4, 5], [5, 4, 3, 2, 1]) == -1.0
    assert spearman([1, 2, 2, 3], [1, 3, 2, 4]) == 0.9487  # ties take their average rank (as scipy does)
    assert spearman([3, 3, 3], [1, 2, 3]) is None  # a constant judge has no rank correlation


def test_judge_agreement_per_dimension_counts_invalid_as_a_miss():
    pairs = [("tone", 5, 5), ("tone", 1, 2), ("tone", 3, 3), ("tone", 4, None),
             ("strategy", 1, 5), ("strategy", 5, 1), ("strategy", 3, 3)]
    out = judge_agreement(pairs)
    assert out["tone"]["exact"] == 0.5 and out["tone"]["n"] == 3 and out["tone"]["invalid"] == 1
    assert out["strategy"]["spearman"] == -1.0


def test_judge_below_threshold_cannot_decide_the_verdict_and_the_report_says_so():
    base, cand = summary({"scaffold_leak": 0.1}, {"tone": 4.5}), summary({"scaffold_leak": 0.1}, {"tone": 2.0})
    weak = {"tone": {"spearman": 0.1, "exact": 0.2, "n": 105, "invalid": 0}}
    result = compare_summaries(base, cand, judge_calibration=weak)
    assert result.verdict == "ok" and result.reasons == []
    judge = result.deltas["judge"]
    assert judge["trusted"] is False and "deterministic checks alone" in judge["note"]
    assert any("tone" in r for r in judge["ignored_reasons"]) and any("Spearman" in w for w in judge["why_not"])
    # No calibration at all is no better than a weak one.
    assert compare_summaries(base, cand).deltas["judge"]["trusted"] is False
    # The deterministic checks still decide.
    worse = summary({"scaffold_leak": 0.4}, {"tone": 2.0})
    assert compare_summaries(base, worse, judge_calibration=weak).verdict == "regression"
    assert compare_summaries(base, cand, judge_calibration=TRUSTED).verdict == "regression"
