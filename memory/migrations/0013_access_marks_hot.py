"""A search's access mark becomes a HOT update (heap-only tuple): it writes no index.

Every search marks its hits as accessed (last_accessed_at, access_count; written behind,
memory/services/access.py). last_accessed_at was in the index fact_tier_access_idx, so each mark
was an ordinary update: a new version of the ~1.9 KB row and a new entry for it in every index of
the table — the HNSW graph (an insertion that searches the graph), the full-text GIN index and
thirteen B-trees. Measured under load: of 12,387 updates of the table 215 were HOT, and PostgreSQL
spent 4.2 ms of CPU per search with access marks on against 2.1 ms with them off
(memory/README.md, "PostgreSQL's share, eleventh round").

An update is HOT when it changes no indexed column and the new version fits on the same page.
So the index goes (the periodic tier move reads the table instead: it runs on the beat schedule,
not on a request), and new pages of the table are filled to 80 % (fillfactor 80): at ~1.9 KB a
row, a page of 8 KB then takes three rows and has room for one new version, and PostgreSQL
prunes dead versions as it reads the page. Pages already written keep their fill until the table
is rewritten (VACUUM FULL memory_fact, or pg_repack, at a quiet time)."""

from django.db import migrations

from core.migration_ops import postgresql_only

FILLFACTOR = 80


class Migration(migrations.Migration):
    dependencies = [("memory", "0012_fact_hubness")]

    operations = [
        migrations.RemoveIndex(model_name="fact", name="fact_tier_access_idx"),
        postgresql_only((f"ALTER TABLE memory_fact SET (fillfactor = {FILLFACTOR})",),
                        ("ALTER TABLE memory_fact RESET (fillfactor)",)),
    ]
