"""Memory writes, one module per job: `ingest` (with `dedup`, the comparison step), `access`
(access marks), `summaries`, `tiers`, `consolidation`, `entities` and `forget`. Every change to a
fact writes a FactHistory row in the same transaction (`history`). Keyword-only, typed, atomic.
No chat model is called here; embeddings come with the facts (memory.ingest computes them)."""

# memory.selectors, memory.batch and memory.api import these names from the package itself.
from memory.services.access import facts_mark_accessed_later
from memory.services.forget import fact_delete, learner_forget
from memory.services.ingest import IngestResult
from memory.vectors import as_array as _as_array

__all__ = ["IngestResult", "_as_array", "fact_delete", "facts_mark_accessed_later", "learner_forget"]
