"""Pure arithmetic over run results: check rates, dimension means and spreads, deltas between two
runs, the regression verdict (from thresholds, in code) and judge reliability. No database here:
`evaluation.services.summaries` gathers rows into the plain structures these functions take."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Thresholds:
    # A deterministic check rate rising by this much (absolute share of replies) is a regression.
    check_rate_increase: float = 0.10
    # A rubric dimension mean falling by this much (on the 1–5 scale) is a regression.
    dimension_mean_drop: float = 0.5
    # Pairwise: the baseline winning this much more often than the candidate (net share).
    pairwise_net_loss: float = 0.20
    # Verbosity in words: mean words per reply growing by this factor (e.g. 1.5 = +50 %).
    mean_words_ratio: float = 1.5
    # Don't call a dimension regression on fewer valid scores than this (per run).
    min_valid_scores: int = 5
    # A judge decides a verdict only if, on the judge calibration set, EVERY rubric dimension
    # reaches both: Spearman rank correlation with the hand scores, and exact-match rate.
    judge_min_spearman: float = 0.5
    judge_min_exact: float = 0.4

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


# --- per-run aggregates ---------------------------------------------------------------------
def check_rates(check_rows: Iterable[dict[str, dict[str, Any]]]) -> dict[str, float]:
    """Share of replies flagged per check. `check_rows` = one `checks` dict per reply."""
    flagged: dict[str, int] = defaultdict(int)
    seen: dict[str, int] = defaultdict(int)
    for row in check_rows:
        for name, result in row.items():
            seen[name] += 1
            flagged[name] += 1 if result.get("flag") else 0
    return {name: round(flagged[name] / seen[name], 4) for name in sorted(seen)}


def check_means(check_rows: Iterable[dict[str, dict[str, Any]]]) -> dict[str, float]:
    """Mean of each check's numeric value (words per reply, format marks per 100 words, emoji)."""
    values: dict[str, list[float]] = defaultdict(list)
    for row in check_rows:
        for name, result in row.items():
            values[name].append(float(result.get("value") or 0.0))
    return {name: round(statistics.fmean(v), 3) for name, v in sorted(values.items()) if v}


def dimension_stats(scores: Iterable[tuple[str, int | None]]) -> dict[str, dict[str, float]]:
    """(dimension, score or None) → mean, stdev (spread), valid count, invalid count."""
    valid: dict[str, list[int]] = defaultdict(list)
    invalid: dict[str, int] = defaultdict(int)
    for dim, score in scores:
        if score is None:
            invalid[dim] += 1
        else:
            valid[dim].append(score)
    out: dict[str, dict[str, float]] = {}
    for dim in sorted(set(valid) | set(invalid)):
        v = valid.get(dim, [])
        out[dim] = {"mean": round(statistics.fmean(v), 3) if v else None,
                    "stdev": round(statistics.pstdev(v), 3) if len(v) > 1 else 0.0,
                    "n": len(v), "invalid": invalid.get(dim, 0)}
    return out


def per_transcript_means(scores: Iterable[tuple[str, str, int | None]]) -> dict[str, dict[str, float]]:
    """(transcript slug, dimension, score) → {slug: {dimension: mean}} over turns and repeats."""
    acc: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for slug, dim, score in scores:
        if score is not None:
            acc[slug][dim].append(score)
    return {slug: {dim: round(statistics.fmean(v), 3) for dim, v in dims.items()} for slug, dims in acc.items()}


# --- judge reliability ----------------------------------------------------------------------
def self_agreement(repeats: Iterable[tuple[Any, list[int | None]]]) -> dict[str, float | int | None]:
    """Across repeats of the same (reply, dimension): share of items whose valid scores are all
    identical, and the mean absolute deviation from the item's mean. Items with < 2 valid scores
    say nothing about agreement and are skipped (counted)."""
    identical = 0
    items = 0
    deviations: list[float] = []
    skipped = 0
    for _key, values in repeats:
        valid = [v for v in values if v is not None]
        if len(valid) < 2:
            skipped += 1
            continue
        items += 1
        identical += 1 if len(set(valid)) == 1 else 0
        mean = statistics.fmean(valid)
        deviations.extend(abs(v - mean) for v in valid)
    return {"items": items, "skipped": skipped,
            "identical_share": round(identical / items, 4) if items else None,
            "mean_abs_deviation": round(statistics.fmean(deviations), 4) if deviations else None}


def pairwise_resolve(ab: int | None, ba_for_a: int | None) -> int | None:
    """Combine both orders into the candidate's preference. `ab` and `ba_for_a` are already mapped
    to "+1 = candidate better". Disagreement between orders counts as a tie; an invalid order
    makes the pair invalid (None)."""
    if ab is None or ba_for_a is None:
        return None
    return ab if ab == ba_for_a else 0


def order_consistency(pairs: Iterable[tuple[int | None, int | None]]) -> dict[str, float | int | None]:
    """Share of pairwise items where both orders gave the same (mapped) preference."""
    same = total = 0
    for ab, ba in pairs:
        if ab is None or ba is None:
            continue
        total += 1
        same += 1 if ab == ba else 0
    return {"items": total, "consistent_share": round(same / total, 4) if total else None}


def pairwise_summary(resolved: Iterable[tuple[str, int | None]]) -> dict[str, dict[str, float]]:
    """(dimension, resolved preference) → wins/losses/ties for the candidate and the net share."""
    acc: dict[str, dict[str, int]] = defaultdict(lambda: {"win": 0, "loss": 0, "tie": 0, "invalid": 0})
    for dim, value in resolved:
        key = "invalid" if value is None else {1: "win", -1: "loss", 0: "tie"}[value]
        acc[dim][key] += 1
    out = {}
    for dim, c in sorted(acc.items()):
        n = c["win"] + c["loss"] + c["tie"]
        out[dim] = {**c, "net": round((c["win"] - c["loss"]) / n, 4) if n else 0.0}
    return out


# --- comparing two runs ---------------------------------------------------------------------
# --- judge validity (calibration) -----------------------------------------------------------
def _ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):  # ties share their average rank
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(xs: list[float], ys: list[float]) -> float | None:
    """Spearman's rho (Pearson on average ranks). None when either side is constant or n < 3."""
    if len(xs) != len(ys) or len(xs) < 3:
        return None
    rx, ry = _ranks(xs), _ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    vx, vy = sum((a - mx) ** 2 for a in rx), sum((b - my) ** 2 for b in ry)
    if vx == 0 or vy == 0:
        return None
    return round(cov / (vx * vy) ** 0.5, 4)


def judge_agreement(pairs: Iterable[tuple[str, int, int | None]]) -> dict[str, dict[str, float | int | None]]:
    """(dimension, hand score, judge score or None) → per dimension: Spearman, exact-match rate,
    valid pairs and invalid judge outputs. An invalid judge output counts as a miss for exact
    match (a judge that cannot answer does not agree)."""
    by_dim: dict[str, list[tuple[int, int | None]]] = defaultdict(list)
    for dim, hand, judged in pairs:
        by_dim[dim].append((hand, judged))
    out: dict[str, dict[str, float | int | None]] = {}
    for dim, rows in sorted(by_dim.items()):
        valid = [(h, j) for h, j in rows if j is not None]
        out[dim] = {"spearman": spearman([h for h, _ in valid], [j for _, j in valid]),
                    "exact": round(sum(1 for h, j in valid if h == j) / len(rows), 4) if rows else None,
                    "n": len(valid), "invalid": len(rows) - len(valid)}
    return out


def judge_trusted(agreement: dict[str, dict[str, Any]] | None, t: Thresholds) -> tuple[bool, list[str]]:
    """Whether the judge may decide a verdict, and why not. No calibration = not trusted."""
    if not agreement:
        return False, ["no judge calibration result for this judge"]
    why = []
    for dim, a in sorted(agreement.items()):
        rho, exact = a.get("spearman"), a.get("exact")
        if rho is None or rho < t.judge_min_spearman:
            why.append(f"{dim}: Spearman {rho if rho is not None else 'n/a'} < {t.judge_min_spearman}")
        if exact is None or exact < t.judge_min_exact:
            why.append(f"{dim}: exact match {exact if exact is not None else 'n/a'} < {t.judge_min_exact}")
    return not why, why


@dataclass
class ComparisonResult:
    verdict: str  # "regression" | "ok"
    reasons: list[str]
    deltas: dict[str, Any]
    thresholds: dict[str, float]


def compare_summaries(baseline: dict[str, Any], candidate: dict[str, Any], *,
                      thresholds: Thresholds | None = None,
                      pairwise: dict[str, dict[str, float]] | None = None,
                      judge_calibration: dict[str, dict[str, Any]] | None = None) -> ComparisonResult:
    """`baseline`/`candidate` are run summaries (see summaries.run_summarize): check_rates,
    check_means, dimensions (stats), per_transcript (means). The verdict depends only on the
    numbers and thresholds here.

    Judge-based reasons (dimension means, pairwise) count only when `judge_calibration` (the
    judge's agreement on the calibration set) reaches the thresholds on every dimension; otherwise
    the verdict rests on the deterministic checks alone and `deltas["judge"]` says so."""
    t = thresholds or Thresholds()
    reasons: list[str] = []
    judge_ok, judge_why = judge_trusted(judge_calibration, t)
    judge_reasons: list[str] = []
    checks: dict[str, dict[str, float]] = {}
    b_rates, c_rates = baseline.get("check_rates", {}), candidate.get("check_rates", {})
    for name in sorted(set(b_rates) | set(c_rates)):
        b, c = b_rates.get(name, 0.0), c_rates.get(name, 0.0)
        delta = round(c - b, 4)
        checks[name] = {"baseline": b, "candidate": c, "delta": delta}
        # Small epsilon so 0.1 - 0.0 computed in floats still counts as "≥ 0.10".
        if delta >= t.check_rate_increase - 1e-9:
            reasons.append(f"check {name} rate {b:.2f} → {c:.2f} (+{delta:.2f} ≥ {t.check_rate_increase:.2f})")
    means: dict[str, dict[str, float]] = {}
    b_means, c_means = baseline.get("check_means", {}), candidate.get("check_means", {})
    for name in sorted(set(b_means) | set(c_means)):
        means[name] = {"baseline": b_means.get(name), "candidate": c_means.get(name),
                       "delta": round((c_means.get(name) or 0) - (b_means.get(name) or 0), 3)}
    b_words, c_words = b_means.get("over_length"), c_means.get("over_length")
    if b_words and c_words and c_words >= b_words * t.mean_words_ratio - 1e-9:
        reasons.append(f"mean words per reply {b_words:.1f} → {c_words:.1f} (×{c_words / b_words:.2f} ≥ "
                       f"×{t.mean_words_ratio})")
    dims: dict[str, dict[str, Any]] = {}
    b_dims, c_dims = baseline.get("dimensions", {}), candidate.get("dimensions", {})
    for dim in sorted(set(b_dims) | set(c_dims)):
        b, c = b_dims.get(dim, {}), c_dims.get(dim, {})
        bm, cm = b.get("mean"), c.get("mean")
        delta = round(cm - bm, 3) if bm is not None and cm is not None else None
        dims[dim] = {"baseline": bm, "candidate": cm, "delta": delta,
                     "baseline_n": b.get("n", 0), "candidate_n": c.get("n", 0)}
        enough = b.get("n", 0) >= t.min_valid_scores and c.get("n", 0) >= t.min_valid_scores
        if delta is not None and enough and delta <= -t.dimension_mean_drop + 1e-9:
            judge_reasons.append(f"dimension {dim} mean {bm:.2f} → {cm:.2f} ({delta:+.2f} ≤ -{t.dimension_mean_drop})")
    per_transcript: dict[str, dict[str, float | None]] = {}
    b_pt, c_pt = baseline.get("per_transcript", {}), candidate.get("per_transcript", {})
    for slug in sorted(set(b_pt) & set(c_pt)):
        row = {}
        for dim in sorted(set(b_pt[slug]) | set(c_pt[slug])):
            bv, cv = b_pt[slug].get(dim), c_pt[slug].get(dim)
            row[dim] = round(cv - bv, 3) if bv is not None and cv is not None else None
        per_transcript[slug] = row
    b_ptc, c_ptc = baseline.get("per_transcript_checks", {}), candidate.get("per_transcript_checks", {})
    per_transcript_checks: dict[str, dict[str, float]] = {}
    for slug in sorted(set(b_ptc) & set(c_ptc)):
        per_transcript_checks[slug] = {name: round(c_ptc[slug].get(name, 0) - b_ptc[slug].get(name, 0), 3)
                                       for name in sorted(set(b_ptc[slug]) | set(c_ptc[slug]))}
    if pairwise:
        for dim, s in pairwise.items():
            if s["net"] <= -t.pairwise_net_loss + 1e-9:
                judge_reasons.append(f"pairwise {dim}: candidate net {s['net']:+.2f} ≤ -{t.pairwise_net_loss}")
    if judge_ok:
        reasons += judge_reasons
    judge = {"trusted": judge_ok, "why_not": judge_why, "calibration": judge_calibration or {},
             "ignored_reasons": [] if judge_ok else judge_reasons,
             "note": "judge reasons count" if judge_ok else
                     "judge below the agreement threshold: the verdict rests on the deterministic checks alone"}
    deltas = {"checks": checks, "check_means": means, "dimensions": dims, "per_transcript": per_transcript,
              "per_transcript_checks": per_transcript_checks, "pairwise": pairwise or {}, "judge": judge}
    return ComparisonResult(verdict="regression" if reasons else "ok", reasons=reasons, deltas=deltas,
                            thresholds=t.as_dict())
