"""Train Bloom's GLiNER entity model on the packaged MiniLM encoder and evaluate it held out.

Recipe (measured, see shared REFERENCE.md): gliner 0.2.29 `GLiNER.from_config(<dict>)` on the
MiniLM folder, marker span head, 250 steps. The model is trained into a temp directory next to
the destination, reloaded from disk exactly as the app will load it, scored on the hand-written
held-out set, and only then swapped into place with a stamp recording the corpus fingerprint and
the hash of every file. A run finding a stamped, intact directory with the same fingerprint does
nothing; a missing file, a changed byte or a changed corpus means retraining.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bloom.llm.assets import ENTITY_LABELS, minilm_path

from . import corpus
from .evaluate import PredictFn, evaluate, format_table

STAMP_NAME = "bloom_entity_stamp.json"
METRICS_NAME = "heldout_metrics.json"
TEMP_PREFIX = ".bloom-partial-"
SEED = corpus.DEFAULT_SEED
THRESHOLD = 0.5
MODEL_CONFIG = {
    "hidden_size": 384,
    "span_mode": "markerV0",
    "max_width": 8,
    "words_splitter_type": "whitespace",
}
TRAIN_SETTINGS = {
    "max_steps": 250,
    "learning_rate": 5e-5,
    "others_lr": 1e-3,
    "per_device_train_batch_size": 8,
}


class EntityModelError(Exception):
    """Building the entity model failed. `str(err)` is one line for the operator."""


@dataclass(frozen=True)
class Outcome:
    trained: bool
    message: str
    metrics: dict | None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(4 * 1024 * 1024):
            digest.update(block)
    return digest.hexdigest()


def current_fingerprint() -> str:
    return corpus.fingerprint(
        extra={"config": MODEL_CONFIG, "train": TRAIN_SETTINGS, "seed": SEED, "threshold": THRESHOLD}
    )


def verify_model_dir(model_dir: Path, fingerprint: str) -> str | None:
    """None if `model_dir` is a complete model for `fingerprint`, else why it is not."""
    stamp_file = model_dir / STAMP_NAME
    if not model_dir.is_dir():
        return "not built yet"
    try:
        stamp = json.loads(stamp_file.read_text())
    except (OSError, ValueError):
        return "incomplete (no valid stamp)"
    if stamp.get("fingerprint") != fingerprint:
        return "stale (corpus or training settings changed)"
    files = stamp.get("files") or {}
    if not files:
        return "incomplete (stamp lists no files)"
    for name, meta in files.items():
        path = model_dir / name
        if not path.is_file():
            return f"damaged ({name} is missing)"
        if path.stat().st_size != meta.get("size") or _sha256(path) != meta.get("sha256"):
            return f"damaged ({name} does not match its recorded hash)"
    return None


def seed_everything(seed: int) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)


def train(examples: Sequence[corpus.Example], *, seed: int = SEED, progress: bool = True, max_steps: int | None = None):
    """Build GLiNER on the MiniLM encoder and train it; returns the in-memory model."""
    from gliner import GLiNER

    seed_everything(seed)
    model = GLiNER.from_config({**MODEL_CONFIG, "model_name": minilm_path()})
    dataset = [corpus.to_gliner(ex) for ex in examples]
    settings = {**TRAIN_SETTINGS, **({"max_steps": max_steps} if max_steps else {})}
    with tempfile.TemporaryDirectory(prefix="bloom-gliner-train-") as scratch:
        model.train_model(
            train_dataset=dataset,
            eval_dataset=None,
            output_dir=scratch,
            use_cpu=True,
            report_to="none",
            save_strategy="no",  # checkpoints would only be thrown away with the scratch dir
            logging_steps=50,
            dataloader_num_workers=0,
            seed=seed,
            data_seed=seed,
            disable_tqdm=not progress,
            **settings,
        )
    return model


def make_predictor(model, *, threshold: float = THRESHOLD, progress: bool = False) -> PredictFn:
    from tqdm import tqdm

    def predict(texts: list[str]) -> list[list[tuple[int, int, str]]]:
        out: list[list[tuple[int, int, str]]] = []
        batch = 16
        for i in tqdm(range(0, len(texts), batch), desc="held-out eval", disable=not progress, leave=False):
            results = model.inference(texts[i : i + batch], list(ENTITY_LABELS), threshold=threshold, batch_size=batch)
            out.extend([(e["start"], e["end"], e["label"]) for e in ents] for ents in results)
        return out

    return predict


def load_model(model_dir: Path):
    from gliner import GLiNER

    return GLiNER.from_pretrained(str(model_dir), local_files_only=True)


def ensure_entity_model(
    model_dir: Path,
    *,
    force: bool = False,
    progress: bool = True,
    log: Callable[[str], None] = print,
) -> Outcome:
    fingerprint = current_fingerprint()
    problem = verify_model_dir(model_dir, fingerprint)
    if problem is None and not force:
        metrics = _read_metrics(model_dir)
        log(format_table(metrics) if metrics else "(no held-out metrics recorded)")
        return Outcome(False, f"entity model: already present, verified -> {model_dir}", metrics)
    log(f"entity model: {'forced retrain' if problem is None else problem}; training on the MiniLM encoder")

    model_dir.parent.mkdir(parents=True, exist_ok=True)
    for stale in model_dir.parent.glob(TEMP_PREFIX + "*"):
        shutil.rmtree(stale, ignore_errors=True)
    tmp = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX + model_dir.name + ".", dir=model_dir.parent))
    try:
        started = time.monotonic()
        train_set = corpus.generate_training()
        heldout = corpus.load_heldout()
        model = train(train_set, progress=progress)
        model.save_pretrained(str(tmp))
        train_seconds = time.monotonic() - started
        # Score the copy on disk, loaded the way the app loads it: proves it is loadable offline.
        reloaded = load_model(tmp)
        started = time.monotonic()
        metrics = evaluate(heldout, make_predictor(reloaded, progress=progress), ENTITY_LABELS)
        eval_seconds = time.monotonic() - started
        metrics.update(
            {
                "split": "heldout (hand-written, never trained on)",
                "threshold": THRESHOLD,
                "train_sentences": len(train_set),
                "train_seconds": round(train_seconds, 1),
                "eval_ms_per_sentence": round(1000 * eval_seconds / max(1, len(heldout)), 1),
            }
        )
        (tmp / METRICS_NAME).write_text(json.dumps(metrics, indent=2) + "\n")
        files = {
            str(p.relative_to(tmp)): {"size": p.stat().st_size, "sha256": _sha256(p)}
            for p in sorted(tmp.rglob("*"))
            if p.is_file()
        }
        stamp = {"fingerprint": fingerprint, "labels": list(ENTITY_LABELS), "seed": SEED, "files": files}
        (tmp / STAMP_NAME).write_text(json.dumps(stamp, indent=2) + "\n")
        _swap_into_place(tmp, model_dir)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise EntityModelError(f"entity model: cannot write {model_dir}: {exc.strerror or exc}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log(format_table(metrics))
    return Outcome(
        True,
        f"entity model: trained in {train_seconds:.0f}s, held-out micro F1 {metrics['micro']['f1']:.2f} -> {model_dir}",
        metrics,
    )


def _swap_into_place(tmp: Path, model_dir: Path) -> None:
    # Directories cannot be replaced atomically; move the old one aside first so a crash leaves
    # either the old, the new, or nothing (which the next run rebuilds), never a mix.
    old = None
    if model_dir.exists():
        old = model_dir.with_name(TEMP_PREFIX + model_dir.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(model_dir, old)
    os.replace(tmp, model_dir)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _read_metrics(model_dir: Path) -> dict | None:
    try:
        return json.loads((model_dir / METRICS_NAME).read_text())
    except (OSError, ValueError):
        return None
