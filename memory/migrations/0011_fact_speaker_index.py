"""An index on who speaks in a fact stored as dialogue ("<Name>: <statement>"), per learner:
(learner_id, the text before the first ':', at most 64 characters). PostgreSQL only.

Search asks, for each capitalised word of a query, whether it starts one of the learner's facts
as "<Name>:" (memory/speakers.py). A query's first word is usually capitalised and nobody's name
("Does", "Would"), so the LIKE 'Does:%' probe read every fact of the learner: 1.7 ms of
execution at ~1,000 facts, a quarter of an in-process search (memory/README.md, "The web
process, prepared statements and the speaker index"). Through this index each probe is one
index look-up."""

from django.db import migrations

from core.migration_ops import postgresql_only

FORWARDS = (
    "CREATE INDEX IF NOT EXISTS fact_learner_speaker ON memory_fact "
    "(learner_id, left(split_part(content, ':', 1), 64))",
)
BACKWARDS = ("DROP INDEX IF EXISTS fact_learner_speaker",)


class Migration(migrations.Migration):
    dependencies = [("memory", "0010_hnsw_denser_graph")]

    operations = [postgresql_only(FORWARDS, BACKWARDS)]
