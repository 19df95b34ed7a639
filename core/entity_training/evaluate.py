"""Per-label precision / recall / F1 of entity predictions against gold spans.

A prediction counts only if its character span AND label match a gold entity exactly: partial
overlaps are errors, since a memory entity must be the exact substring a user would search for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .corpus import Example

Span = tuple[int, int, str]
PredictFn = Callable[[list[str]], list[list[Span]]]


def _prf(tp: int, fp: int, fn: int) -> dict[str, float | int]:
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"tp": tp, "fp": fp, "fn": fn, "support": tp + fn, "precision": precision, "recall": recall, "f1": f1}


def score(gold: Sequence[Sequence[Span]], predicted: Sequence[Sequence[Span]], labels: Sequence[str]) -> dict:
    """Score aligned lists of gold and predicted spans (one list per sentence)."""
    if len(gold) != len(predicted):
        raise ValueError(f"got {len(predicted)} prediction lists for {len(gold)} sentences")
    unknown = {label for sent in list(gold) + list(predicted) for *_, label in sent} - set(labels)
    if unknown:
        raise ValueError(f"unknown label(s) {sorted(unknown)}; expected one of {list(labels)}")
    counts = {label: [0, 0, 0] for label in labels}  # tp, fp, fn
    for gold_spans, pred_spans in zip(gold, predicted, strict=False):
        g, p = set(gold_spans), set(pred_spans)
        for _, _, label in g & p:
            counts[label][0] += 1
        for _, _, label in p - g:
            counts[label][1] += 1
        for _, _, label in g - p:
            counts[label][2] += 1
    per_label = {label: _prf(*c) for label, c in counts.items()}
    totals = [sum(c[i] for c in counts.values()) for i in range(3)]
    present = [m for m in per_label.values() if m["support"]]
    return {
        "n_sentences": len(gold),
        "per_label": per_label,
        "micro": _prf(*totals),
        "macro_f1": sum(m["f1"] for m in present) / len(present) if present else 0.0,
    }


def evaluate(examples: Sequence[Example], predict: PredictFn, labels: Sequence[str]) -> dict:
    predicted = predict([ex.text for ex in examples])
    return score([ex.spans for ex in examples], predicted, labels)


def format_table(metrics: dict) -> str:
    """A Markdown table (it goes into the README as is)."""
    lines = ["| label | precision | recall | F1 | support |", "|---|---:|---:|---:|---:|"]
    rows = [*list(metrics["per_label"].items()), ("**micro avg**", metrics["micro"])]
    for label, m in rows:
        lines.append(f"| {label} | {m['precision']:.2f} | {m['recall']:.2f} | {m['f1']:.2f} | {m['support']} |")
    lines.append(f"| macro F1 | | | {metrics['macro_f1']:.2f} | {metrics['n_sentences']} sentences |")
    return "\n".join(lines)
