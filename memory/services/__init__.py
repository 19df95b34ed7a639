"""Memory writes, one module per job: `ingest` (with `dedup`, the comparison step), `access`
(access marks), `summaries`, `tiers`, `consolidation`, `entities`, `hubness` and `forget`. Every change to
a fact writes a FactHistory row in the same transaction (`history`); hubness, derived ranking data
like the stored tsvector, does not. Keyword-only, typed, atomic.
No chat model is called here; embeddings come with the facts (memory.ingest computes them)."""
