"""Evaluation writes, one module per job: `sets` (load sets and rubrics, freeze a conversation),
`runs` (configure and execute a run), `checking` (the checks of a replayed reply, re-checking a
run), `judging` (pointwise judge scores), `pairwise`, `summaries` (a run's rates and statistics),
`comparisons` (the verdict between two runs) and `calibration` (the judge against hand scores)."""
