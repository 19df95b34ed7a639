"""Vector arithmetic shared by ingest, consolidation and the SQLite search path: pgvector values
as numpy arrays, unit vectors and cosine similarity. Pure functions, no database."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def as_array(vec: Any) -> np.ndarray:
    arr = np.asarray(vec if not isinstance(vec, str) else _parse_vector_text(vec), dtype=np.float32)
    return arr


def _parse_vector_text(text: str) -> list[float]:
    # SQLite stores pgvector values as '[0.1,0.2,...]'.
    return [float(x) for x in text.strip("[] ").split(",") if x.strip()]


def cosine(a: Any, b: Any) -> float:
    va, vb = as_array(a), as_array(b)
    na, nb = float(np.linalg.norm(va)), float(np.linalg.norm(vb))
    if na == 0 or nb == 0:
        return 0.0
    return float(np.dot(va, vb) / (na * nb))


def unit_rows(vectors: Sequence[Any]) -> np.ndarray:
    """Stored vectors (pgvector values, lists or text) as the rows of a matrix of unit vectors."""
    mat = np.vstack([as_array(v) for v in vectors])
    mat /= np.maximum(np.linalg.norm(mat, axis=1, keepdims=True), 1e-9)
    return mat


def unit(vec: Sequence[float]) -> np.ndarray:
    arr = np.asarray(vec, dtype=np.float32)
    return arr / max(float(np.linalg.norm(arr)), 1e-9)
