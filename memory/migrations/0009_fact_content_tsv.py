"""The full-text vector of a fact is stored (PostgreSQL only): `content_tsv`, a column generated
from `to_tsvector('english', content)`, with the GIN index on it instead of the expression index.

Per learner the search scans that learner's rows (found through the learner index), and the
expression index cannot help there: the planner recomputed to_tsvector for every row of the
learner in the WHERE and again in ts_rank_cd (EXPLAIN ANALYZE at ~1,000 facts: memory/README.md,
"Search speed, fourth round"). Stored, it is computed once, when the fact is written. The column
is not in the model (Django never writes it; PostgreSQL fills it); SQLite has no such column and
its search is unchanged."""

from django.db import migrations

from core.migration_ops import postgresql_only

FORWARDS = (
    "ALTER TABLE memory_fact ADD COLUMN IF NOT EXISTS content_tsv tsvector "
    "GENERATED ALWAYS AS (to_tsvector('english'::regconfig, content)) STORED",
    "CREATE INDEX IF NOT EXISTS fact_content_tsv ON memory_fact USING gin (content_tsv)",
    "DROP INDEX IF EXISTS fact_content_fts",
)
BACKWARDS = (
    "CREATE INDEX IF NOT EXISTS fact_content_fts ON memory_fact USING gin (to_tsvector('english'::regconfig, content))",
    "DROP INDEX IF EXISTS fact_content_tsv",
    "ALTER TABLE memory_fact DROP COLUMN IF EXISTS content_tsv",
)


class Migration(migrations.Migration):
    dependencies = [("memory", "0008_history_public_refs")]

    operations = [postgresql_only(FORWARDS, BACKWARDS)]
