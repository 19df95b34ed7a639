"""The run summary's turn times: the same percentile definition as telemetry's latencies."""

from evaluation.services.summaries import _percentiles


def test_turn_times_are_interpolated_percentiles_with_the_count_and_the_longest():
    assert _percentiles([4.0, 1.0, 3.0, 2.0]) == {"n": 4, "p50": 2.5, "p95": 3.85, "max": 4.0}
    assert _percentiles([7.0]) == {"n": 1, "p50": 7.0, "p95": 7.0, "max": 7.0}
    assert _percentiles([]) == {"n": 0}
