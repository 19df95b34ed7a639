"""Fact extraction measured per model, side by side in one run, on a hand-labelled set
(memory/eval_data/extraction_v1.json: 72 learner messages, labelled before any model saw them).

Each message goes through exactly what `memory.extract_facts` does — the same prompt
(memory.extraction.extraction_messages, no earlier turns), the same schema, options and validation
(memory.rules.validate_model_facts) — with the model given, and what would be stored is scored.

The matching rule, fixed before the first run:
- a stored fact is *correct* when one of its message's labelled facts has a MiniLM cosine >= 0.60
  with it (the exact graph, the vectors memory stores); *correct, same type* when that labelled
  fact also has the same fact_type. Precision = correct / stored.
- recall = labelled facts that some stored fact of the message matches / labelled facts.
- "third person": the fact speaks of "the learner" (the project's convention, so the share is
  expected near 1); "first person": it still says I / my / me (the learner's own voice kept, which
  reads as if the coach said it); "question or request": it ends with "?" or asks the coach for
  something (memory.rules.request_to_coach). Shown for the raw model output and for what is stored.
- facts per message; facts stored from messages that carry no fact (greetings, questions, requests).
Sensitivity: precision at cosine 0.50 and 0.70 too, so the threshold's choice can be seen.

    python bench/run.py memory_extraction            # both chat models of the cache
    BENCH_EXTRACTION_MODELS=openai:a,ollama:b python bench/run.py memory_extraction
    python bench/run.py memory_extraction --quick    # every 4th message (18, all kinds)
"""

from __future__ import annotations

import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "memory" / "eval_data" / "extraction_v1.json"
MATCH_COSINE = 0.60
SENSITIVITY = (0.50, 0.70)
DEFAULT_MODELS = ("openai:qwen2.5-coder-0.5b-instruct-q4", "openai:qwen2.5-coder-1.5b-instruct-q4")
_FIRST_PERSON = re.compile(r"(?i)\b(?:I|I'm|I've|I'd|I'll|my|me|myself|mine)\b")
_THIRD_PERSON = re.compile(r"(?i)\bthe learner\b")


def load_set(quick: bool = False) -> list[dict]:
    messages = json.loads(DATA.read_text())["messages"]
    return messages[::4] if quick else messages  # every 4th: each kind of message is still in it


def person_shares(contents: list[str]) -> dict[str, float]:
    from memory.rules import request_to_coach

    n = len(contents) or 1
    return {
        "third_person": sum(bool(_THIRD_PERSON.search(c)) for c in contents) / n,
        "first_person": sum(bool(_FIRST_PERSON.search(c)) for c in contents) / n,
        "question_or_request": sum(c.rstrip().endswith("?") or request_to_coach(c) for c in contents) / n,
    }


def score(items: list[dict], vectors: dict[str, list[float]], threshold: float) -> dict[str, float]:
    """items: [{"labels": [(type, text)], "stored": [(type, text)]}]; vectors: text -> unit vector."""
    import numpy as np

    stored = correct = typed = labelled = found = 0
    for item in items:
        labels = item["labels"]
        labelled += len(labels)
        matched_labels: set[int] = set()
        for fact_type, text in item["stored"]:
            stored += 1
            sims = [float(np.dot(vectors[text], vectors[label])) for _, label in labels]
            hits = [i for i, s in enumerate(sims) if s >= threshold]
            if hits:
                correct += 1
                matched_labels.update(hits)
                typed += any(labels[i][0] == fact_type for i in hits)
        found += len(matched_labels)
    return {"stored": stored, "precision": correct / stored if stored else float("nan"),
            "precision_typed": typed / stored if stored else float("nan"),
            "recall": found / labelled if labelled else float("nan")}


def extract(model: str, messages: list[dict]) -> tuple[list[dict], dict[str, float]]:
    from core.llm import LLMInvalidOutput, chat
    from memory import conf, rules
    from memory.extraction import FACTS_SCHEMA, extraction_messages

    items, seconds, parse_errors = [], [], 0
    for message in messages:
        started = time.perf_counter()
        try:
            result = chat(extraction_messages(target=message["text"], context=[]), schema=FACTS_SCHEMA,
                          options={"max_tokens": conf.EXTRACTION_MAX_TOKENS, "temperature": 0.0, "timeout": 600},
                          model=model, operation="chat")
            raw = [str(f.get("content", "")) for f in (result.parsed or {}).get("facts", []) if isinstance(f, dict)]
            facts, _ = rules.validate_model_facts(result.parsed, source=message["text"])
        except LLMInvalidOutput:
            parse_errors += 1
            raw, facts = [], []
        seconds.append(time.perf_counter() - started)
        items.append({"id": message["id"], "kind": message["kind"], "raw": raw,
                      "labels": [(f["fact_type"], f["content"]) for f in message["facts"]],
                      "stored": [(f.fact_type, f.content) for f in facts]})
    return items, {"parse_errors": parse_errors, "p50_s": statistics.median(seconds),
                   "p95_s": sorted(seconds)[max(0, int(len(seconds) * 0.95) - 1)]}


def run(quick: bool) -> list[dict]:
    from core.llm import embed

    models = [m.strip() for m in os.environ.get("BENCH_EXTRACTION_MODELS", ",".join(DEFAULT_MODELS)).split(",")
              if m.strip()]
    messages = load_set(quick)
    no_fact = {m["id"] for m in messages if not m["facts"]}
    runs = {model: extract(model, messages) for model in models}
    texts = sorted({t for items, _ in runs.values() for it in items for _, t in it["labels"] + it["stored"]})
    vectors = dict(zip(texts, embed(texts), strict=True)) if texts else {}
    out_dir = ROOT / "var" / "bench"
    out_dir.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    note_set = f"{len(messages)} messages, {sum(len(m['facts']) for m in messages)} labelled facts"
    for model, (items, timing) in runs.items():
        name = model.split(":", 1)[1].replace("qwen2.5-coder-", "").replace("-instruct-q4", "")
        main = score(items, vectors, MATCH_COSINE)
        stored = [t for it in items for _, t in it["stored"]]
        raw = [t for it in items for t in it["raw"]]
        shares_stored, shares_raw = person_shares(stored), person_shares(raw)
        on_no_fact = sum(len(it["stored"]) for it in items if it["id"] in no_fact)

        def row(metric: str, value: float, unit: str = "", note: str = "", name: str = name) -> dict:
            return {"bench": "memory_extraction", "metric": f"{name}: {metric}", "value": value, "unit": unit,
                    "note": note}

        rows += [
            row("facts stored", main["stored"], "", f"{note_set}; {len(raw)} proposed by the model"),
            row("facts per message", main["stored"] / len(messages), ""),
            row("precision", main["precision"], "", f"stored fact matches a label at cosine >= {MATCH_COSINE}"),
            row("precision, same type", main["precision_typed"], "", "and the label's fact_type"),
            row("recall", main["recall"], "", "labelled facts matched by a stored fact"),
            *[row(f"precision at cosine {t:.2f}", score(items, vectors, t)["precision"], "", "sensitivity")
              for t in SENSITIVITY],
            row("stored from no-fact messages", on_no_fact, "facts", f"{len(no_fact)} messages with no fact"),
            row("third person (stored)", shares_stored["third_person"], "share", "'The learner …' (the convention)"),
            row("first person kept (stored)", shares_stored["first_person"], "share", "I / my / me in a stored fact"),
            row("question or request (stored)", shares_stored["question_or_request"], "share"),
            row("third person (raw)", shares_raw["third_person"], "share", "model output before validation"),
            row("first person kept (raw)", shares_raw["first_person"], "share"),
            row("question or request (raw)", shares_raw["question_or_request"], "share"),
            row("parse errors", timing["parse_errors"], "messages"),
            row("time per message p50", timing["p50_s"], "s"),
            row("time per message p95", timing["p95_s"], "s"),
        ]
        (out_dir / f"extraction_{name}.json").write_text(json.dumps(items, indent=1))
    return rows


if __name__ == "__main__":  # pragma: no cover
    sys.exit("run through bench/run.py")
