"""Memory benchmarks: the read path (build_context) and hybrid search at scale.

Run on PostgreSQL + pgvector (use a scratch database: it inserts and then deletes its own rows):
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bloom_bench_mem python bench/run.py memory --quick
Sizes: --quick = 10k facts; full = 10k and 100k. 1M is supported (BENCH_MEMORY_SIZES=1000000) but
takes long on 2 cores. BENCH_HNSW_CONFIGS="32:128,48:200" also builds and measures those graphs on the
same rows (build time, size, recall by ef_search, filtered per-learner HNSW with iterative scan).
BENCH_MEMORY_LEARNER_SIZES=1000000 measures per-learner search at that size in the database
(`bench_learner_scale`; with BENCH_MEMORY_SIZES=0 nothing else but the read path runs).
Vectors are synthetic (clustered unit vectors, 384-d): embedding 100k texts with
MiniLM would measure the embedder, not the store. HNSW: the migration's graph (memory.conf.HNSW_M,
HNSW_EF_CONSTRUCTION), ef_search=conf.HNSW_EF_SEARCH.
"""

from __future__ import annotations

import os
import statistics
import time
import uuid
from collections import defaultdict
from datetime import timedelta

import numpy as np

DIM = 384


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def _client_and_learners(n: int, tag: str):
    from django.apps import apps

    ApiClient = apps.get_model("identity", "ApiClient")
    Learner = apps.get_model("identity", "Learner")
    client = ApiClient.objects.create(name=f"bench-memory-{tag}-{time.time_ns()}")
    learners = Learner.objects.bulk_create([Learner(client=client, display_name=f"b{i}") for i in range(n)])
    return client, [x.pk for x in learners]


def _cleanup(client) -> None:
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("DELETE FROM memory_facthistory WHERE fact_id IN (SELECT f.id FROM memory_fact f JOIN "
                    "coaching_learner l ON l.id = f.learner_id WHERE l.client_id = %s)", [client.pk])
        cur.execute("DELETE FROM memory_fact WHERE learner_id IN "
                    "(SELECT id FROM coaching_learner WHERE client_id = %s)", [client.pk])
        cur.execute("DELETE FROM memory_summary WHERE learner_id IN "
                    "(SELECT id FROM coaching_learner WHERE client_id = %s)", [client.pk])
    client.delete()


def bench_build_context(rows: list[dict]) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from memory.models import Fact, Summary
    from memory.rules import content_hash
    from memory.selectors import build_context

    client, (learner_id,) = _client_and_learners(1, "ctx")
    try:
        now = timezone.now()
        rng = np.random.default_rng(1)
        facts = []
        for i in range(2000):
            created = now - timedelta(days=365 * i / 2000)
            vec = rng.normal(size=DIM)
            facts.append(Fact(learner_id=learner_id, fact_type="insight",
                              content=f"Synthetic fact {i} about topic {i % 37}.",
                              content_hash=content_hash(f"f{i}"), confidence=0.5, last_accessed_at=created,
                              embedding=(vec / np.linalg.norm(vec)).tolist(), archived=i > 400))
        Fact.objects.bulk_create(facts, batch_size=500)
        # Spread creation dates over a year (auto_now_add ignores the value given at insert).
        with connection.cursor() as cur:
            cur.execute("UPDATE memory_fact SET created_at = now() - (id %% 365) * interval '1 day' "
                        "WHERE learner_id = %s", [learner_id])
        Summary.objects.bulk_create([Summary(learner_id=learner_id, period_start=now - timedelta(days=7 * (i + 1)),
                                             period_end=now - timedelta(days=7 * i), text=f"Week {i}: steady progress.",
                                             fact_count=5) for i in range(50)])
        build_context(learner_id)  # warm
        with CaptureQueriesContext(connection) as ctx:
            build_context(learner_id)
        timings, cpu = [], []
        for _ in range(500):
            t, c = time.perf_counter(), time.process_time()
            build_context(learner_id)
            timings.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
        # Baseline round trip: on a shared, loaded machine wall time is mostly waiting for a core.
        base = []
        with connection.cursor() as cur:
            for _ in range(500):
                t = time.perf_counter()
                cur.execute("SELECT 1")
                cur.fetchall()
                base.append((time.perf_counter() - t) * 1000)
        load = os.getloadavg()[0]
        rows += [
            {"bench": "memory.build_context", "metric": "queries", "value": len(ctx.captured_queries), "unit": "",
             "note": "2,000 facts + 50 summaries (coaching adds 1 for the profile)"},
            {"bench": "memory.build_context", "metric": "p50", "value": statistics.median(timings), "unit": "ms",
             "note": f"{connection.vendor}, 500 calls"},
            {"bench": "memory.build_context", "metric": "p95", "value": pct(timings, 95), "unit": "ms",
             "note": f"target < 5 ms; load average {load:.1f}"},
            {"bench": "memory.build_context", "metric": "cpu p95", "value": pct(cpu, 95), "unit": "ms",
             "note": "client-process CPU time per call"},
            {"bench": "memory.build_context", "metric": "SELECT 1 p95", "value": pct(base, 95), "unit": "ms",
             "note": "round-trip baseline on this machine"},
        ]
    finally:
        _cleanup(client)


def _clustered_vectors(rng, n: int, centers: np.ndarray) -> np.ndarray:
    idx = rng.integers(0, len(centers), size=n)
    vecs = centers[idx] + rng.normal(scale=0.6 / np.sqrt(DIM), size=(n, DIM)) * np.sqrt(DIM) * 0.05
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs.astype(np.float32)


EF_SWEEP = (40, 100, 200, 400)


def _load_facts(rng, size: int, centers: np.ndarray, learner_ids: list[int], vocab: list[str]):
    """COPY `size` synthetic facts, each for a learner drawn at random (so one learner's rows are
    spread over the whole table, as facts written over time are). Returns their vectors, learners
    and ids, position i <-> row i."""
    from django.db import connection

    all_vecs, all_learners = [], []
    batch = 5000
    for start in range(0, size, batch):
        n = min(batch, size - start)
        vecs = _clustered_vectors(rng, n, centers)
        lids = rng.choice(learner_ids, size=n)
        words = rng.integers(0, len(vocab), size=(n, 6))
        with connection.cursor() as cur, cur.connection.cursor().copy(
                "COPY memory_fact (learner_id, fact_type, content, confidence, source_agent, embedding, "
                "content_hash, created_at, last_accessed_at, access_count, tier, archived, surprise, "
                "surprise_reason, external_id, metadata, public_id, hubness) FROM STDIN") as copy:
            for j in range(n):
                vec = "[" + ",".join(f"{x:.6f}" for x in vecs[j]) + "]"
                text = " ".join(vocab[k] for k in words[j])
                copy.write_row((int(lids[j]), "insight", text, 0.5, "bench", vec, f"b{size}-{start + j}",
                                "2026-11-01", "2026-11-20", 0, "hot", False, False, "", "", "{}",
                                str(uuid.uuid4()), 0.0))  # hubness: none (memory/hubness.py)
        all_vecs.append(vecs)
        all_learners.append(lids)
    with connection.cursor() as cur:
        cur.execute("SELECT id FROM memory_fact WHERE learner_id = ANY(%s) ORDER BY id", [learner_ids])
        all_ids = np.array([r[0] for r in cur.fetchall()])
    return np.vstack(all_vecs), np.concatenate(all_learners), all_ids


def bench_search(rows: list[dict], size: int, queries: int = 100) -> None:
    from django.conf import settings
    from django.db import connection, transaction

    from memory import conf
    from memory.selectors import search_memory, search_memory_global

    if settings.DB_VENDOR != "postgresql":
        rows.append({"bench": "memory.search", "metric": "skipped", "value": 0, "unit": "", "note": "needs PostgreSQL"})
        return
    n_learners = max(10, size // 1000)
    client, learner_ids = _client_and_learners(n_learners, f"search{size}")
    rng = np.random.default_rng(size)
    centers = rng.normal(size=(256, DIM))
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    vocab = [f"w{i}" for i in range(2000)]
    configs = [tuple(int(x) for x in c.split(":")) for c in os.environ.get("BENCH_HNSW_CONFIGS", "").split(",")
               if c.strip()]
    try:
        with connection.cursor() as cur:
            cur.execute("DROP INDEX IF EXISTS fact_embedding_hnsw")
        t0 = time.perf_counter()
        mat, lid_arr, all_ids = _load_facts(rng, size, centers, learner_ids, vocab)
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        with connection.cursor() as cur:
            # The HNSW graph must fit in maintenance_work_mem or the build slows down badly
            # (~2 KB per 384-d element); one parallel worker on 2 cores.
            cur.execute(f"SET maintenance_work_mem = '{'4GB' if size >= 500_000 else '512MB'}'")
            cur.execute("SET max_parallel_maintenance_workers = 1")
            cur.execute("CREATE INDEX fact_embedding_hnsw ON memory_fact USING hnsw (embedding vector_cosine_ops) "
                        f"WITH (m = {conf.HNSW_M}, ef_construction = {conf.HNSW_EF_CONSTRUCTION})")
            cur.execute("ANALYZE memory_fact")
        index_s = time.perf_counter() - t0
        # Note: all bench rows of this run were inserted in id order, so position i ↔ all_ids[i].
        qvecs = _clustered_vectors(rng, queries, centers)
        per_t, glob_t, recall_hits, recall_learner_hits = [], [], 0, 0
        sweep_ms: dict[int, list[float]] = {ef: [] for ef in EF_SWEEP}
        sweep_hits: dict[int, int] = dict.fromkeys(EF_SWEEP, 0)
        for i, q in enumerate(qvecs):
            lid = int(learner_ids[i % len(learner_ids)])
            qtext = " ".join(vocab[k] for k in rng.integers(0, len(vocab), size=3))
            t = time.perf_counter()
            res = search_memory(learner_id=lid, query=qtext, limit=10, touch=False, query_embedding=q.tolist())
            per_t.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            search_memory_global(query=qtext, limit=10, touch=False, query_embedding=q.tolist())
            glob_t.append((time.perf_counter() - t) * 1000)
            # Recall of the vector index itself (global, ANN vs exact numpy top 10).
            sims = mat @ q
            exact = set(all_ids[np.argsort(-sims)[:10]].tolist())
            with transaction.atomic(), connection.cursor() as cur:
                cur.execute(f"SET LOCAL hnsw.ef_search = {int(conf.HNSW_EF_SEARCH)}")
                cur.execute("SELECT id FROM memory_fact ORDER BY embedding <=> %s::vector LIMIT 10",
                            ["[" + ",".join(f"{x:.7g}" for x in q) + "]"])
                ann = {r[0] for r in cur.fetchall()}
            recall_hits += len(exact & ann)
            # The same ANN query at other ef_search values: the recall/latency trade-off at this size.
            for ef in EF_SWEEP:
                with transaction.atomic(), connection.cursor() as cur:
                    cur.execute(f"SET LOCAL hnsw.ef_search = {ef}")
                    t = time.perf_counter()
                    cur.execute("SELECT id FROM memory_fact ORDER BY embedding <=> %s::vector LIMIT 10",
                                ["[" + ",".join(f"{x:.7g}" for x in q) + "]"])
                    sweep_ms[ef].append((time.perf_counter() - t) * 1000)
                    sweep_hits[ef] += len(exact & {r[0] for r in cur.fetchall()})
            # Per-learner: the exact-scan path (vector part) vs numpy exact for that learner.
            mask = lid_arr == lid
            lsims = sims[mask]
            lexact = set(all_ids[mask][np.argsort(-lsims)[:10]].tolist())
            with transaction.atomic(), connection.cursor() as cur:
                cur.execute("SET LOCAL enable_indexscan = off")
                cur.execute("SELECT id FROM memory_fact WHERE learner_id = %s "
                            "ORDER BY embedding <=> %s::vector LIMIT 10",
                            [lid, "[" + ",".join(f"{x:.7g}" for x in q) + "]"])
                lann = {r[0] for r in cur.fetchall()}
            recall_learner_hits += len(lexact & lann) / max(1, min(10, len(lexact))) * 10
            assert res is not None
        tag = f"{size:,} facts / {n_learners} learners"
        rows += [
            {"bench": "memory.search", "metric": f"load {size}", "value": load_s, "unit": "s",
             "note": f"COPY, {tag}"},
            {"bench": "memory.search", "metric": f"hnsw build {size}", "value": index_s, "unit": "s",
             "note": f"m={conf.HNSW_M}, ef_construction={conf.HNSW_EF_CONSTRUCTION}, vector_cosine_ops, "
                     "maintenance_work_mem "
                     f"{'4GB' if size >= 500_000 else '512MB'}, 1 parallel worker"},
            {"bench": "memory.search", "metric": f"per-learner p50 {size}", "value": statistics.median(per_t),
             "unit": "ms",
             "note": f"hybrid (exact vector scan + FTS), {tag}, query embedding excluded"},
            {"bench": "memory.search", "metric": f"per-learner p95 {size}", "value": pct(per_t, 95), "unit": "ms",
             "note": ""},
            {"bench": "memory.search", "metric": f"global p50 {size}", "value": statistics.median(glob_t),
             "unit": "ms",
             "note": f"hybrid (HNSW ef_search={conf.HNSW_EF_SEARCH} + FTS)"},
            {"bench": "memory.search", "metric": f"global p95 {size}", "value": pct(glob_t, 95), "unit": "ms",
             "note": ""},
            {"bench": "memory.search", "metric": f"recall@10 global {size}", "value": recall_hits / (10 * queries),
             "unit": "", "note": "HNSW vs exact numpy top-10, target ≥ 0.95"},
            {"bench": "memory.search", "metric": f"recall@10 per-learner {size}",
             "value": recall_learner_hits / (10 * queries), "unit": "", "note": "exact scan"},
        ]
        rows += [{"bench": "memory.search", "metric": f"recall@10 global {size} ef_search={ef}",
                  "value": sweep_hits[ef] / (10 * queries), "unit": "",
                  "note": f"vector-only ANN query p50 {statistics.median(sweep_ms[ef]):.1f} ms, "
                          f"p95 {pct(sweep_ms[ef], 95):.1f} ms"} for ef in EF_SWEEP]
        if configs:
            _hnsw_sweep(rows, size, configs, mat, all_ids, lid_arr, qvecs, learner_ids)
    finally:
        _cleanup(client)
        if configs:  # the migration's index again, built once the bench's rows are gone
            with connection.cursor() as cur:
                cur.execute("DROP INDEX IF EXISTS fact_embedding_hnsw")
                cur.execute("CREATE INDEX fact_embedding_hnsw ON memory_fact USING hnsw "
                            f"(embedding vector_cosine_ops) WITH (m = {conf.HNSW_M}, "
                            f"ef_construction = {conf.HNSW_EF_CONSTRUCTION})")


def bench_learner_scale(rows: list[dict], size: int, queries: int = 100) -> None:
    """Per-learner search at scale, in the database: the statement `search_memory` runs for one
    learner (memory.selectors.hybrid_statement), timed by PostgreSQL itself (EXPLAIN ANALYZE:
    planning + execution, TIMING OFF so per-node clocks add nothing), 1,000 facts per learner spread
    over the whole table. Each of `queries` learners is searched once (its pages not yet in
    PostgreSQL's buffers, only in the OS cache: what a learner's first search after a while meets),
    then the same searches again (buffers warm). The whole search in-process (Python included, the
    query vector given) is timed beside it. No HNSW index: a per-learner search scans that learner's
    rows exactly and cannot use it (its ORDER BY takes the vector from a CTE), so building the graph
    (~20 min at 1M) would measure nothing here. BENCH_MEMORY_LEARNER_SIZES=1000000."""
    import json

    from django.conf import settings
    from django.db import connection
    from django.utils import timezone

    from memory import conf
    from memory.selectors import hybrid_statement, search_memory

    if settings.DB_VENDOR != "postgresql":
        return
    n_learners = max(10, size // 1000)
    client, learner_ids = _client_and_learners(n_learners, f"learner{size}")
    rng = np.random.default_rng(size + 1)
    centers = rng.normal(size=(256, DIM))
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    vocab = [f"w{i}" for i in range(2000)]
    try:
        with connection.cursor() as cur:
            cur.execute("DROP INDEX IF EXISTS fact_embedding_hnsw")
        t0 = time.perf_counter()
        _load_facts(rng, size, centers, learner_ids, vocab)
        load_s = time.perf_counter() - t0
        with connection.cursor() as cur:
            cur.execute("ANALYZE memory_fact")
            cur.execute("SHOW shared_buffers")
            buffers = cur.fetchone()[0]
        # One arm ("now"): the "before" (learner's rows not taken first) and "copy" (rows copied
        # whole before scoring) statements it was compared with were removed with the ranking of
        # the fourteenth round (memory/README.md, "Ranking, fourteenth round").
        arms = (("now",),)
        picked = [int(x) for x in rng.choice(learner_ids, size=min(2 * len(arms) * queries, n_learners),
                                             replace=False)]
        share = len(picked) // (2 * len(arms))
        qvecs = _clustered_vectors(rng, share, centers)
        qtexts = [" ".join(vocab[k] for k in rng.integers(0, len(vocab), size=3)) for _ in qvecs]
        timed: dict[str, list[float]] = defaultdict(list)
        for a, (arm,) in enumerate(arms):
            db_set = picked[2 * a * share:(2 * a + 1) * share]
            search_set = picked[(2 * a + 1) * share:(2 * a + 2) * share]
            for attempt in ("first", "again"):
                for lid, q, text in zip(db_set, qvecs, qtexts, strict=True):
                    sql, params = hybrid_statement(learner_id=lid, query=text, qvec=q.tolist(), k=100, limit=10,
                                                   now=timezone.now())
                    with connection.cursor() as cur:
                        cur.execute("EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) " + sql, params)
                        plan = cur.fetchone()[0]
                    plan = (json.loads(plan) if isinstance(plan, str) else plan)[0]
                    timed[f"{arm} db {attempt}"].append(plan["Planning Time"] + plan["Execution Time"])
                for lid, q, text in zip(search_set, qvecs, qtexts, strict=True):
                    t = time.perf_counter()
                    search_memory(learner_id=lid, query=text, limit=10, touch=False, query_embedding=q.tolist())
                    timed[f"{arm} search {attempt}"].append((time.perf_counter() - t) * 1000)
        tag = f"{size:,} facts, {n_learners} learners of ~{size // n_learners} facts, shared_buffers {buffers}"
        rows.append({"bench": "memory.learner", "metric": f"load {size}", "value": load_s, "unit": "s",
                     "note": f"COPY, {tag}"})
        for name, values in timed.items():
            what = ("in the database (EXPLAIN ANALYZE: planning + execution)" if " db " in name
                    else "whole search in-process, query vector given")
            rows.append({"bench": "memory.learner", "metric": f"per-learner {name} p50 {size}",
                         "value": statistics.median(values), "unit": "ms", "note": f"{what}; {tag}"})
            rows.append({"bench": "memory.learner", "metric": f"per-learner {name} p95 {size}",
                         "value": pct(values, 95), "unit": "ms", "note": f"{len(values)} searches"})
    finally:
        _cleanup(client)
        with connection.cursor() as cur:  # the migration's index again, on what is left
            cur.execute("CREATE INDEX IF NOT EXISTS fact_embedding_hnsw ON memory_fact USING hnsw "
                        f"(embedding vector_cosine_ops) WITH (m = {conf.HNSW_M}, "
                        f"ef_construction = {conf.HNSW_EF_CONSTRUCTION})")


def _hnsw_sweep(rows: list[dict], size: int, configs: list[tuple[int, int]], mat, all_ids, lid_arr, qvecs,
                learner_ids) -> None:
    """Other graphs on the same rows (BENCH_HNSW_CONFIGS="m:ef_construction,..."): build time, index
    size, global recall@10 against exact numpy at each ef_search, and per learner the filtered HNSW
    query with pgvector's iterative scan (relaxed order) against that learner's exact top 10 — the
    path that returns too few rows without it. The caller rebuilds the migration's index
    (conf.HNSW_M, conf.HNSW_EF_CONSTRUCTION) once the bench's rows are gone."""
    from django.db import connection, transaction

    def literal(q) -> str:
        return "[" + ",".join(f"{x:.7g}" for x in q) + "]"

    def build(m: int, efc: int) -> tuple[float, float]:
        with connection.cursor() as cur:
            cur.execute("DROP INDEX IF EXISTS fact_embedding_hnsw")
            cur.execute(f"SET maintenance_work_mem = '{'4GB' if size >= 500_000 else '1GB'}'")
            cur.execute("SET max_parallel_maintenance_workers = 1")
            t0 = time.perf_counter()
            cur.execute("CREATE INDEX fact_embedding_hnsw ON memory_fact USING hnsw (embedding vector_cosine_ops) "
                        f"WITH (m = {int(m)}, ef_construction = {int(efc)})")
            build_s = time.perf_counter() - t0
            cur.execute("SELECT pg_relation_size('fact_embedding_hnsw')")
            return build_s, cur.fetchone()[0] / 1e6

    exact = [set(all_ids[np.argsort(-(mat @ q))[:10]].tolist()) for q in qvecs]
    for m, efc in configs:
        build_s, size_mb = build(m, efc)
        tag = f"m={m} ef_construction={efc}"
        rows.append({"bench": "memory.hnsw", "metric": f"build {size} {tag}", "value": build_s, "unit": "s",
                     "note": f"index {size_mb:,.0f} MB, 1 parallel worker"})
        for ef in EF_SWEEP:
            hits, ms = 0, []
            for q, want in zip(qvecs, exact, strict=True):
                with transaction.atomic(), connection.cursor() as cur:
                    cur.execute(f"SET LOCAL hnsw.ef_search = {ef}")
                    t = time.perf_counter()
                    cur.execute("SELECT id FROM memory_fact ORDER BY embedding <=> %s::vector LIMIT 10", [literal(q)])
                    got = {r[0] for r in cur.fetchall()}
                    ms.append((time.perf_counter() - t) * 1000)
                hits += len(want & got)
            rows.append({"bench": "memory.hnsw", "metric": f"recall@10 global {size} {tag} ef_search={ef}",
                         "value": hits / (10 * len(qvecs)), "unit": "",
                         "note": f"p50 {statistics.median(ms):.1f} / p95 {pct(ms, 95):.1f} ms"})
        hits, short, ms = 0.0, 0, []
        for i, q in enumerate(qvecs):
            lid = int(learner_ids[i % len(learner_ids)])
            mask = lid_arr == lid
            want = set(all_ids[mask][np.argsort(-(mat[mask] @ q))[:10]].tolist())
            with transaction.atomic(), connection.cursor() as cur:
                cur.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                cur.execute("SET LOCAL hnsw.ef_search = 100")
                t = time.perf_counter()
                cur.execute("SELECT id FROM (SELECT id, embedding <=> %s::vector AS d FROM memory_fact "
                            "WHERE learner_id = %s ORDER BY d LIMIT 10) t ORDER BY d", [literal(q), lid])
                got = {r[0] for r in cur.fetchall()}
                ms.append((time.perf_counter() - t) * 1000)
            hits += len(want & got) / max(1, min(10, len(want)))
            short += len(got) < min(10, len(want))
        rows.append({"bench": "memory.hnsw", "metric": f"recall@10 per-learner filtered HNSW {size} {tag}",
                     "value": hits / len(qvecs), "unit": "",
                     "note": f"iterative_scan=relaxed_order, ef_search=100: p50 {statistics.median(ms):.1f} / "
                             f"p95 {pct(ms, 95):.1f} ms, {short} of {len(qvecs)} short of 10 rows"})


def run(quick: bool) -> list[dict]:
    rows: list[dict] = []
    bench_build_context(rows)
    sizes = os.environ.get("BENCH_MEMORY_SIZES")  # "0": none (e.g. to run only the per-learner scale)
    for size in ([int(s) for s in sizes.split(",")] if sizes else ([10_000] if quick else [10_000, 100_000])):
        if size > 0:
            bench_search(rows, size)
    for size in [int(s) for s in os.environ.get("BENCH_MEMORY_LEARNER_SIZES", "").split(",") if s.strip()]:
        bench_learner_scale(rows, size)
    return rows
