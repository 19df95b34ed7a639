"""GLiNER entity extraction: the locally trained checkpoint (`BLOOM_ENTITY_MODEL=local`) or any
GLiNER checkpoint directory. GLiNER points at spans of the input, so it cannot invent entities;
we still check every span against the source and drop any that is not an exact substring."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from core.llm import assets
from core.llm.types import EntitySpan, LLMInvalidOutput, LLMUnavailable

_lock = threading.Lock()
_models: dict[str, Any] = {}


def model_dir(model: str) -> Path:
    if model in ("", "local"):
        return assets.gliner_model_dir()
    return Path(model).expanduser()


def load(model: str) -> Any:
    path = model_dir(model)
    key = str(path)
    with _lock:
        if key in _models:
            return _models[key]
        if not path.is_dir():
            raise LLMUnavailable(
                f"entity model {path} is missing: run `python manage.py bloom_models` "
                f"(or set BLOOM_ENTITY_MODEL to a GLiNER checkpoint directory)", transient=False)
        try:
            from gliner import GLiNER

            _models[key] = GLiNER.from_pretrained(key, local_files_only=True, map_location="cpu")
        except Exception as exc:
            raise LLMUnavailable(f"could not load entity model {path}: {exc}", transient=False) from None
        return _models[key]


DEFAULT_THRESHOLD = 0.5
METRICS_NAME = "heldout_metrics.json"  # written beside the weights by core.entity_training.build


def threshold_in(path: Path) -> float | None:
    """The threshold chosen when a checkpoint was built, or None if it carries no readable one."""
    try:
        value = float(json.loads((path / METRICS_NAME).read_text())["threshold"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return value if 0.0 < value < 1.0 else None


def stored_threshold(model: str) -> float:
    """The built-in threshold of the checkpoint; other checkpoints use GLiNER's usual 0.5."""
    return threshold_in(model_dir(model)) or DEFAULT_THRESHOLD


class GLiNEREntities:
    name = "gliner"
    # Texts per forward pass: GLiNER pads a batch to its longest text, and facts are short
    # (≤ 500 chars), so a larger batch costs little padding and saves per-call overhead.
    batch_size = 16

    def predict(self, model: str, text: str, labels: list[str],
                threshold: float | None) -> tuple[list[EntitySpan], int]:
        return self.predict_many(model, [text], labels, threshold)[0]

    def predict_many(self, model: str, texts: list[str], labels: list[str],
                     threshold: float | None) -> list[tuple[list[EntitySpan], int]]:
        """One batched `GLiNER.inference` call for all texts; per text, its checked spans and how
        many were dropped. (`predict_entities` is `inference` on a one-text list, and
        `batch_predict_entities` a deprecated alias of `inference`.)"""
        gliner = load(model)
        if threshold is None:
            threshold = stored_threshold(model)
        with _lock:  # one shared torch model; GLiNER is not documented as thread-safe
            raw = gliner.inference(list(texts), list(labels), threshold=threshold, batch_size=self.batch_size)
        if len(raw) != len(texts):
            raise LLMInvalidOutput(f"GLiNER returned {len(raw)} results for {len(texts)} texts")
        return [_checked(text, found, labels) for text, found in zip(texts, raw, strict=True)]

    def health(self, model: str) -> tuple[bool, str]:
        path = model_dir(model)
        if not path.is_dir():
            return False, f"entity model {path} is missing: run `python manage.py bloom_models`"
        try:
            load(model)
        except LLMUnavailable as exc:
            return False, str(exc)
        return True, f"GLiNER from {path}"


def _checked(text: str, raw: list[Any], labels: list[str]) -> tuple[list[EntitySpan], int]:
    """The spans that are exact substrings of `text` at their offsets, with a label asked for."""
    spans: list[EntitySpan] = []
    dropped = 0
    for item in raw:
        try:
            start, end = int(item["start"]), int(item["end"])
            span_text, label, score = str(item["text"]), str(item["label"]), float(item["score"])
        except (KeyError, TypeError, ValueError) as exc:
            raise LLMInvalidOutput(f"GLiNER returned a malformed span {item!r}: {exc}") from None
        if not (0 <= start < end <= len(text)) or text[start:end] != span_text or label not in labels:
            dropped += 1
            continue
        spans.append(EntitySpan(start=start, end=end, text=span_text, label=label, score=score))
    return spans, dropped
