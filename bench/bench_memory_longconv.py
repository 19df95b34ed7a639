"""Retrieval on long two-person conversations, two sets side by side in one run:

- "generated": memory/eval_data/longconv_v1.json (made by make_longconv.py, written by the project);
- "locomo": the development half of LoCoMo, read from ../shared/benchmarks/locomo_dev.json beside
  the repository (never committed; its README gives the scoring used here). Skipped, with a note
  row, when that file is absent.

Each conversation is one learner. Every turn is stored as "<speaker>: <text>" through the batch
endpoint (`POST learners/<uuid>/facts/batch`, the whole Django/DRF stack, 100 items a request,
client-sent MiniLM vectors, every ingest rule applied: exact duplicates dropped, near duplicates
merged, surprises flagged). Each question of categories 1-4 is searched with limit 10; recall@k =
the share of the question's evidence turns among the top k, averaged per category and overall.
A turn merged into an older fact is not found (its text is no longer stored): that is what the
merge costs. Malformed LoCoMo evidence ids ("D8:6; D9:17", "D:11:26", "D30:05") are split on ';'
and whitespace and normalised to "D<session>:<turn>"; ids not in the conversation are dropped.

Baselines in the same run, over all turns (nothing merged), on the same exact MiniLM vectors:
dense cosine, BM25 (the `bm25s` package when installed, else the plain Okapi below, said in the
note) and their reciprocal-rank fusion (k = 60, top 100 of each). Bloom's ranking is run as
VARIANTS: "bloom" is the default; each other variant switches one mechanism off
(memory/README.md, "Ablation").

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bloom_bench_lc \\
      CELERY_BROKER_URL=redis://127.0.0.1:6379/6 .venv/bin/python bench/run.py memory_longconv

Speed, in the same run, on one learner holding the first two LoCoMo conversations (or three
generated ones without LoCoMo; about 1,000 facts either way): search p50/p95 in-process and over
the stack (`GET learners/<uuid>/search`, Bearer auth, throttle, serializers, rendering), each with
the query cache emptied first (every question embedded again, int8 query graph), and the batch
endpoint's ingest rate (facts/s, client-sent vectors) over every conversation stored.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "memory" / "eval_data" / "longconv_v1.json"
# Beside the repository (CI clones it elsewhere with a copy of shared/ next to it).
LOCOMO = ROOT.parent / "shared" / "benchmarks" / "locomo_dev.json"
# Hand labels of flagged surprise pairs (memory/README.md, "Surprise flags"): for the generated set
# the pairs' texts too; for LoCoMo only ids and labels (its licence keeps its text out of the repo).
LABELS = ROOT / "memory" / "eval_data" / "surprise_labels_v1.json"
KS = (1, 5, 10)
CATEGORIES = ("single-hop", "multi-hop", "temporal", "inference")
LOCOMO_CATEGORY = {1: "multi-hop", 2: "temporal", 3: "inference", 4: "single-hop"}  # 5 (adversarial) left out
RRF_K, FUSE_DEPTH = 60, 100
BASELINES = ("dense", "bm25", "dense+bm25")

# The ranking before the mix (reciprocal-rank fusion, vector-led): run beside it in every run.
PREVIOUS_RANKING = {"conf.SEARCH_FUSION": "rrf", "conf.SEARCH_W_VECTOR": 0.9, "conf.SEARCH_W_TEXT": 0.1,
                    "conf.SEARCH_HUB_WEIGHT": 0.75}
# The mix before the length prior replaced hubness in it (memory/README.md "Ranking, eighteenth round").
MIX_BEFORE = {"conf.SEARCH_W_LENGTH": 0.0, "conf.SEARCH_HUB_WEIGHT": 0.5}
# Bloom's ranking, one mechanism off at a time (_variants). Each override names "conf.<NAME>"
# (memory/conf.py), "ranking.<NAME>" (memory/ranking.py), "selectors.<NAME>" (memory/selectors.py)
# or a Django setting "BLOOM_...".
VARIANTS: dict[str, dict] = {}


def _variants() -> dict[str, dict]:
    from memory import selectors

    # The text side as PostgreSQL ranks it by itself (ts_rank_cd: no inverse document frequency),
    # in place of BM25, to show what the term statistics bring.
    bm25 = selectors._LEARNER_PASS_CTE[selectors._LEARNER_PASS_CTE.index("tm AS ("):]
    cover = selectors._LEARNER_PASS_CTE.replace(bm25, """
txt AS (SELECT lf.id, ts_rank_cd(lf.tsv, q.tq) AS r FROM lf, q WHERE lf.tsv IS NOT NULL
        ORDER BY r DESC, lf.id DESC LIMIT %(k)s),""")
    return {"bloom": {}, "no length prior": {"conf.SEARCH_W_LENGTH": 0.0},
            "length prior 0.25": {"conf.SEARCH_W_LENGTH": 0.25}, "length prior 0.3": {"conf.SEARCH_W_LENGTH": 0.3},
            "the mix before (hubness 0.5, no length prior)": MIX_BEFORE,
            "hubness 0.5 and length prior": {"conf.SEARCH_HUB_WEIGHT": 0.5},
            "no vector side": {"conf.SEARCH_W_VECTOR": 0.0},
            "no text side": {"conf.SEARCH_W_TEXT": 0.0},
            "no decay": {"conf.DECAY_FLOOR": 1.0}, "no speaker filter": {"selectors.SPEAKER_FILTER": False},
            "speaker-blind": {"selectors.SPEAKER_AWARE": False}, "sides 40 deep": {"ranking.SIDE_DEPTH": 40},
            "text weight 0.3": {"conf.SEARCH_W_TEXT": 0.3}, "text weight 0.7": {"conf.SEARCH_W_TEXT": 0.7},
            "RRF as before": PREVIOUS_RANKING, "RRF before, text ts_rank_cd": {**PREVIOUS_RANKING,
                                                                            "selectors._LEARNER_PASS_CTE": cover},
            "plain RRF, no hubness": {"conf.SEARCH_FUSION": "rrf", "conf.SEARCH_W_VECTOR": 1.0,
                                      "conf.SEARCH_W_TEXT": 1.0, "conf.SEARCH_HUB_WEIGHT": 0.0}}


def load_generated() -> list[dict]:
    return json.loads(GENERATED.read_text())["conversations"]


_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


def normalise_evidence(raw: list[str], known: set[str]) -> list[str]:
    """LoCoMo's evidence ids as "D<session>:<turn>", malformed ones repaired, unknown ones dropped."""
    out: list[str] = []
    for entry in raw:
        for part in re.split(r"[;\s]+", entry):
            m = _EVIDENCE.fullmatch(part.strip())
            if m:
                ident = f"D{int(m.group(1))}:{int(m.group(2))}"
                if ident in known and ident not in out:
                    out.append(ident)
    return out


def _locomo_time(text: str) -> str:
    # "1:56 pm on 8 May, 2023" -> "2023-05-08T13:56"
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").strftime("%Y-%m-%dT%H:%M")
    except ValueError:
        return "2023-01-01T00:00"


def load_locomo() -> list[dict] | None:
    if not LOCOMO.exists():
        return None
    convs = []
    for sample in json.loads(LOCOMO.read_text()):
        c = sample["conversation"]
        turns = []
        sessions = sorted(int(k.split("_")[1]) for k in c if re.fullmatch(r"session_\d+", k))
        for n in sessions:
            at = _locomo_time(c.get(f"session_{n}_date_time", ""))
            turns += [{"id": t["dia_id"], "speaker": t["speaker"], "text": t["text"], "at": at}
                      for t in c[f"session_{n}"]]
        known = {t["id"] for t in turns}
        questions, dropped = [], 0
        for q in sample["qa"]:
            if q["category"] not in LOCOMO_CATEGORY:
                continue
            evidence = normalise_evidence(q.get("evidence", []), known)
            if not evidence:
                dropped += 1
                continue
            questions.append({"question": q["question"], "evidence": evidence,
                              "category": LOCOMO_CATEGORY[q["category"]]})
        convs.append({"id": sample["sample_id"], "turns": turns, "questions": questions, "no_evidence": dropped})
    return convs


# --- baselines ---------------------------------------------------------------------------------------------
_TOK = re.compile(r"[a-z0-9]+")
_STOP = {"the", "a", "an", "and", "or", "of", "to", "in", "on", "for", "is", "are", "was", "i", "my", "me", "do",
         "does", "did", "what", "which", "when", "how", "who", "with", "at", "it", "be", "this", "that", "about"}


class _Okapi:
    """Plain Okapi BM25 (k1 1.2, b 0.75): the baseline when `bm25s` is not installed."""

    def __init__(self, docs: list[str], k1: float = 1.2, b: float = 0.75):
        tok = lambda d: [t for t in _TOK.findall(d.casefold()) if t not in _STOP]  # noqa: E731
        self.tok = tok
        self.docs = [Counter(tok(d)) for d in docs]
        self.lens = [sum(c.values()) for c in self.docs]
        self.avg = sum(self.lens) / max(1, len(self.lens))
        df: Counter = Counter()
        for c in self.docs:
            df.update(c.keys())
        n = len(docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.k1, self.b = k1, b

    def top(self, query: str, k: int) -> list[int]:
        terms = set(self.tok(query))
        scores = []
        for i, (c, ln) in enumerate(zip(self.docs, self.lens, strict=True)):
            s = sum(self.idf[t] * c[t] * (self.k1 + 1) / (c[t] + self.k1 * (1 - self.b + self.b * ln / self.avg))
                    for t in terms if c.get(t))
            if s > 0:
                scores.append((s, i))
        scores.sort(key=lambda x: -x[0])
        return [i for _, i in scores[:k]]


class _Bm25s:
    """BM25 with IDF from the `bm25s` package (its defaults: Lucene variant, English stop words)."""

    def __init__(self, docs: list[str]):
        import bm25s

        self.bm25s = bm25s
        self.n = len(docs)
        self.index = bm25s.BM25()
        self.index.index(bm25s.tokenize(docs, stopwords="en", show_progress=False), show_progress=False)

    def top(self, query: str, k: int) -> list[int]:
        tokens = self.bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return []
        ids, scores = self.index.retrieve(tokens, k=min(k, self.n), show_progress=False)
        return [int(i) for i, s in zip(ids[0], scores[0], strict=True) if s > 0]


def bm25_index(docs: list[str]):
    try:
        return _Bm25s(docs), "bm25s"
    except ImportError:
        return _Okapi(docs), "plain Okapi (bm25s not installed)"


def rrf(*rankings: list[int], k: int = RRF_K) -> list[int]:
    score: dict[int, float] = defaultdict(float)
    for ranking in rankings:
        for rank, i in enumerate(ranking):
            score[i] += 1.0 / (k + rank + 1)
    return sorted(score, key=lambda i: -score[i])


# --- switching a mechanism off -----------------------------------------------------------------------------
@contextlib.contextmanager
def ranking(overrides: dict):
    from django.test import override_settings

    from memory import conf, ranking, selectors

    modules = {"conf": conf, "ranking": ranking, "selectors": selectors}
    saved = []
    for key, value in overrides.items():
        if key.split(".", 1)[0] in modules:
            module = modules[key.split(".", 1)[0]]
            name = key.split(".", 1)[1]
            saved.append((module, name, getattr(module, name)))
            setattr(module, name, value)
    try:
        with override_settings(**{k: v for k, v in overrides.items() if k.startswith("BLOOM_")}):
            yield
    finally:
        for module, name, value in reversed(saved):
            setattr(module, name, value)


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def _recall(found: list[set[str]], evidence: list[str], k: int) -> float:
    got: set[str] = set()
    for ids in found[:k]:
        got |= ids
    return sum(1 for e in evidence if e in got) / len(evidence)


# --- the run -----------------------------------------------------------------------------------------------
class _Api:
    """The batch endpoint and the search endpoint, through the whole stack, as one client."""

    def __init__(self):
        from rest_framework.test import APIClient

        from core.identity.models import ApiClient
        from core.identity.services import api_token_create

        self.owner = ApiClient.objects.create(name=f"bench-longconv-{time.time_ns()}")
        _, raw = api_token_create(client=self.owner, name="bench")
        self.client = APIClient()
        self.client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")

    def learner(self, name: str):
        from core.identity.models import Learner

        return Learner.objects.create(client=self.owner, display_name=name)

    def store(self, learner, turns: list[dict], vectors: list[list[float]], out: dict) -> None:
        from django.core.cache import cache

        items = [{"fact_type": "insight", "content": f"{t['speaker']}: {t['text']}", "embedding": v,
                  "occurred_at": t["at"] + ":00Z", "external_id": t["id"]} for t, v in zip(turns, vectors, strict=True)]
        for start in range(0, len(items), 100):
            cache.clear()  # the per-client throttle's counters: a bench is not a client to throttle
            t0 = time.perf_counter()
            r = self.client.post(f"/api/v1/memory/learners/{learner.research_id}/facts/batch",
                                 {"items": items[start:start + 100]}, format="json")
            out["store_s"] += time.perf_counter() - t0
            assert r.status_code == 201, r.content[:300]
            out["outcomes"].update(i["outcome"] for i in r.json()["items"])
        out["turns"] += len(items)

    def search(self, learner, query: str) -> None:
        r = self.client.get(f"/api/v1/memory/learners/{learner.research_id}/search",
                            {"q": query, "limit": 10, "touch": "false"})
        assert r.status_code == 200, r.content[:300]


def _texts(turns: list[dict]) -> list[str]:
    from memory import rules

    return [rules.clean_text(f"{t['speaker']}: {t['text']}") for t in turns]


def evaluate_set(api: _Api, name: str, convs: list[dict], out: dict) -> None:
    from core.llm import embed
    from memory import rules, selectors, speakers
    from memory.models import Fact
    from memory.selectors import embed_query, search_memory

    recall = out["recall"][name]
    for conv in convs:
        learner = api.learner(f"{name}-{conv['id']}")
        texts = _texts(conv["turns"])
        vectors = embed(texts)
        api.store(learner, conv["turns"], vectors, out["ingest"])
        out["surprise_pairs"][name] += [
            {"conversation": conv["id"], "newer_id": ext, "older_id": older_ext, "newer": newer, "older": older,
             "rule": rule}
            for ext, older_ext, newer, older, rule in Fact.objects.filter(learner_id=learner.pk, surprise=True)
            .order_by("pk").values_list("external_id", "conflicts_with__external_id", "content",
                                        "conflicts_with__content", "surprise_reason")]
        out["facts"][name] += Fact.objects.filter(learner_id=learner.pk).count()
        # Which turns each stored fact stands for (exact duplicates share one fact).
        turns_of_text: dict[str, set[str]] = defaultdict(set)
        for t, text in zip(conv["turns"], texts, strict=True):
            turns_of_text[rules.content_hash(text)].add(t["id"])
        fact_turns = {fid: turns_of_text.get(h, set()) for fid, h in
                      Fact.objects.filter(learner_id=learner.pk).values_list("id", "content_hash")}
        mat = np.asarray(vectors, dtype=np.float32)
        mat /= np.linalg.norm(mat, axis=1, keepdims=True)
        bm25, out["bm25_impl"] = bm25_index(texts)
        turn_ids = [{t["id"]} for t in conv["turns"]]
        for q in conv["questions"]:
            qv = np.asarray(embed([q["question"]])[0], dtype=np.float32)  # the exact vector
            dense = list(np.argsort(-(mat @ qv))[:FUSE_DEPTH])
            sparse = bm25.top(q["question"], FUSE_DEPTH)
            found = {"dense": [turn_ids[i] for i in dense[:10]], "bm25": [turn_ids[i] for i in sparse[:10]],
                     "dense+bm25": [turn_ids[i] for i in rrf(dense, sparse)[:10]]}
            for system, overrides in VARIANTS.items():
                with ranking(overrides):
                    # The vector the search will use (a named speaker's name taken out), cached now:
                    # the search below times the database part and the Python around it.
                    who = (speakers.named_speakers(learner_id=learner.pk, query=q["question"])
                           if selectors.SPEAKER_AWARE else [])
                    embed_query(speakers.embedding_text(q["question"], who))
                    t0 = time.perf_counter()
                    hits = search_memory(learner_id=learner.pk, query=q["question"], limit=10, touch=False)
                    out["lat"][f"{system} (vector cached)"].append(time.perf_counter() - t0)
                found[system] = [fact_turns.get(h["fact_id"], set()) for h in hits]
            for system, ranked in found.items():
                for k in KS:
                    r = _recall(ranked, q["evidence"], k)
                    recall[system][(q["category"], k)].append(r)
                    recall[system][("all", k)].append(r)
        out["no_evidence"][name] += conv.get("no_evidence", 0)


def measure_speed(api: _Api, convs: list[dict], out: dict) -> None:
    """One learner with ~1,000 facts; every search embeds its question again (query cache emptied)."""
    from django.core.cache import cache

    from core.llm import embed
    from memory import selectors
    from memory.models import Fact
    from memory.selectors import search_memory

    learner = api.learner("speed")
    # Turn ids repeat across conversations ("D1:3"): prefixed, or a known external id would drop the turn.
    turns = [{**t, "id": f"{c['id']}/{t['id']}"} for c in convs for t in c["turns"]]
    api.store(learner, turns, embed(_texts(turns)), {"store_s": 0.0, "turns": 0, "outcomes": Counter()})
    out["speed_facts"] = Fact.objects.filter(learner_id=learner.pk).count()
    questions = [q["question"] for c in convs for q in c["questions"]][:300]
    for n, q in enumerate(questions):
        if n % 50 == 0:
            cache.clear()  # the throttle's counters
        selectors._query_cache.clear()
        t0 = time.perf_counter()
        search_memory(learner_id=learner.pk, query=q, limit=10, touch=False)
        out["lat"]["in-process"].append(time.perf_counter() - t0)
        selectors._query_cache.clear()
        t0 = time.perf_counter()
        api.search(learner, q)
        out["lat"]["over the stack (HTTP)"].append(time.perf_counter() - t0)


def evaluate(*, quick: bool = False) -> dict:
    out: dict = {"recall": defaultdict(lambda: defaultdict(lambda: defaultdict(list))), "lat": defaultdict(list),
                 "ingest": {"store_s": 0.0, "turns": 0, "outcomes": Counter()}, "facts": Counter(),
                 "surprise_pairs": defaultdict(list), "no_evidence": Counter(), "sets": {}}
    sets = {"generated": load_generated(), "locomo": load_locomo()}
    VARIANTS.clear()
    VARIANTS.update(_variants())
    api = _Api()
    try:
        for name, convs in sets.items():
            if convs is None:
                continue
            convs = convs[:1] if quick else convs
            out["sets"][name] = sum(len(c["questions"]) for c in convs)
            evaluate_set(api, name, convs, out)
        speed_convs = sets["locomo"][:2] if sets["locomo"] else sets["generated"][:3]
        measure_speed(api, speed_convs[:1] if quick else speed_convs, out)
    finally:
        from bench.bench_memory import _cleanup
        from memory.services.access import facts_access_flush

        facts_access_flush()
        _cleanup(api.owner)
    return out


def table(out: dict) -> str:
    lines = []
    for name in out["sets"]:
        head = f"{name:<10} {'system':<22} " + " ".join(f"{c:>11}" for c in (*CATEGORIES, "all"))
        lines += [head, "-" * len(head)]
        recall = out["recall"][name]
        for system in (*BASELINES, *VARIANTS):
            cells = []
            for cat in (*CATEGORIES, "all"):
                vals = recall[system][(cat, 10)]
                cells.append(f"{statistics.mean(vals):>11.3f}" if vals else f"{'-':>11}")
            lines.append(f"{'':<10} {system:<22} " + " ".join(cells))
        n = {cat: len(recall["dense"][(cat, 10)]) for cat in (*CATEGORIES, "all")}
        lines.append(f"{'':<10} {'questions':<22} " + " ".join(f"{n[c]:>11}" for c in (*CATEGORIES, "all")))
        lines.append("")
    lines.append("latency (ms)                          p50     p95")
    for key, values in out["lat"].items():
        lines.append(f"{key:<34} {1000 * pct(values, 50):>7.2f} {1000 * pct(values, 95):>7.2f}")
    ing = out["ingest"]
    lines.append(f"\nbatch endpoint ingest: {ing['turns']} turns in {ing['store_s']:.1f} s "
                 f"({ing['turns'] / max(ing['store_s'], 1e-9):.0f} facts/s); outcomes {dict(ing['outcomes'])}")
    lines.append(f"BM25 baseline: {out.get('bm25_impl', '-')}; speed learner: {out.get('speed_facts', 0)} facts")
    return "\n".join(lines)


def _dump_surprises(out: dict) -> None:
    """BENCH_SURPRISE_PAIRS=<path>: write every flagged pair of the run (texts included: for the
    labeller's eyes, never committed for LoCoMo)."""
    path = os.environ.get("BENCH_SURPRISE_PAIRS")
    if path:
        Path(path).write_text(json.dumps(out["surprise_pairs"], indent=1, ensure_ascii=False) + "\n")


def surprise_rows(out: dict) -> list[dict]:
    """Precision of the surprise flags of this run against the hand labels: of the flagged pairs
    that carry a label, the share labelled a contradiction (the newer statement contradicts the
    older one of the same person). Flagged pairs without a label are counted, not guessed."""
    if not LABELS.exists():
        return []
    labels = json.loads(LABELS.read_text())
    rows = []
    for name in out["sets"]:
        known = {(p["conversation"], p["newer_id"], p["older_id"]): p["contradiction"] for p in labels.get(name, [])}
        flagged = out["surprise_pairs"][name]
        judged = [known[k] for k in ((p["conversation"], p["newer_id"], p["older_id"]) for p in flagged) if k in known]
        true_pairs = sum(1 for v in known.values() if v)
        still = sum(1 for p in flagged if known.get((p["conversation"], p["newer_id"], p["older_id"])))
        rows.append({"bench": "memory.longconv", "metric": f"{name} surprise precision",
                     "value": sum(judged) / len(judged) if judged else float("nan"), "unit": "",
                     "note": f"{len(flagged)} flagged, {len(judged)} of them labelled ({sum(judged)} contradictions); "
                             f"{still} of the {true_pairs} labelled contradictions still flagged; "
                             f"{len(known)} labelled pairs in all"})
    return rows


def run(quick: bool) -> list[dict]:
    out = evaluate(quick=quick)
    _dump_surprises(out)
    print(table(out), file=sys.stderr, flush=True)
    rows = []
    if "locomo" not in out["sets"]:
        rows.append({"bench": "memory.longconv", "metric": "locomo", "value": "skipped", "unit": "",
                     "note": f"{LOCOMO} not found: only the generated set was run"})
    for name, questions in out["sets"].items():
        for system in (*BASELINES, *VARIANTS):
            for cat in (*CATEGORIES, "all"):
                vals = out["recall"][name][system][(cat, 10)]
                if not vals:
                    continue
                note = (f"n {len(vals)}, R@1 {statistics.mean(out['recall'][name][system][(cat, 1)]):.3f}, "
                        f"R@5 {statistics.mean(out['recall'][name][system][(cat, 5)]):.3f}")
                if system == "bm25":
                    note += f"; {out['bm25_impl']}"
                rows.append({"bench": "memory.longconv", "metric": f"{name} {system} R@10 {cat}",
                             "value": statistics.mean(vals), "unit": "", "note": note})
        rows.append({"bench": "memory.longconv", "metric": f"{name} facts stored", "value": out["facts"][name],
                     "unit": "facts", "note": f"{questions} questions; "
                                              f"{out['no_evidence'][name]} left out with no valid evidence id"})
    for key, values in out["lat"].items():
        rows.append({"bench": "memory.longconv", "metric": f"search {key} p50", "value": 1000 * pct(values, 50),
                     "unit": "ms", "note": f"p95 {1000 * pct(values, 95):.2f} ms, {len(values)} searches"})
    rows += surprise_rows(out)
    ing = out["ingest"]
    rows.append({"bench": "memory.longconv", "metric": "batch endpoint ingest",
                 "value": ing["turns"] / max(ing["store_s"], 1e-9), "unit": "facts/s",
                 "note": f"client-sent vectors; outcomes {dict(ing['outcomes'])}"})
    return rows
