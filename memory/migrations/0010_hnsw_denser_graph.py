"""The global vector index gets a denser graph: HNSW m=32, ef_construction=128 (was 16 / 64).

Measured at 1,000,000 facts (`bench/bench_memory.py` with BENCH_HNSW_CONFIGS, memory/README.md
"HNSW at scale"): recall@10 against exact search was 0.861 at ef_search 100 (0.94 at 400) with
the old graph and is 0.976 at ef_search 100 with this one (vector-only query p95 12 ms under
load), for about twice the build time (1,223 s vs 586 s on 2 shared cores) at the same size on
disk. Only staff's global search uses this index; per-learner search scans the learner's rows
exactly. On a large table this migration rebuilds the index: minutes per million facts.
PostgreSQL only (SQLite has no vector index)."""

from django.db import migrations

from core.migration_ops import postgresql_only

DENSER = ("DROP INDEX IF EXISTS fact_embedding_hnsw",
          "CREATE INDEX fact_embedding_hnsw ON memory_fact USING hnsw (embedding vector_cosine_ops) "
          "WITH (m = 32, ef_construction = 128)")
PREVIOUS = ("DROP INDEX IF EXISTS fact_embedding_hnsw",
            "CREATE INDEX fact_embedding_hnsw ON memory_fact USING hnsw (embedding vector_cosine_ops) "
            "WITH (m = 16, ef_construction = 64)")


class Migration(migrations.Migration):
    dependencies = [("memory", "0009_fact_content_tsv")]

    operations = [postgresql_only(DENSER, PREVIOUS)]
