"""Train Bloom's GLiNER entity model on the packaged MiniLM encoder and evaluate it held out.

Recipe (measured; the facts are in docs/facts.md): gliner 0.2.29 `GLiNER.from_config(<dict>)` on the
MiniLM folder, marker span head (here 500 steps, encoder lr 1e-4, dropout 0.1). Two changes to
that recipe are what make the labels work (without them the model finds spans but scores every
label alike, ~0.2-0.3, so nothing clears 0.5 and the label is a coin toss):

* `embed_ent_token=False`: a label is represented by the encoder output of its own first word
  ("skill", "time", ...) instead of the freshly added `<<ENT>>` marker before it. The marker's new
  input embedding is tiny (norm 0.11 against ~1.06 for real words after 250 steps), so in a few
  hundred steps its output only encodes its *position* in the prompt (neighbouring labels' vectors had cosine
  0.8-0.98); the label word's output carries the pretrained meaning from step one.
* every training sentence is prompted with all the labels (`ner_negatives` = the labels it does
  not contain), as at inference. gliner's default shows only the sentence's own labels plus a
  random few from the batch (often none), so "pick the entity-shaped span" already minimised the
  loss and the model never had to tell `skill` from `time`.

The inference threshold is chosen on a validation split of fresh template sentences (never the
held-out set) and stored in the metrics and stamp JSON as `threshold`. The model is trained into
a temp directory next to the destination, reloaded from disk exactly as the app will load it,
scored on the hand-written held-out set, and only then swapped into place (mode 0755) with a
stamp recording the corpus fingerprint and the hash of every file. A run finding a stamped,
intact directory with the same fingerprint does nothing; a missing file, a changed byte or a
changed corpus means retraining.
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

from core.llm.assets import ENTITY_LABELS, minilm_path
from core.llm.providers.gliner import METRICS_NAME  # one name for the writer (here) and the reader

from . import corpus
from .evaluate import PredictFn, evaluate, format_table, score

STAMP_NAME = "bloom_entity_stamp.json"
TEMP_PREFIX = ".bloom-partial-"
SEED = corpus.DEFAULT_SEED
DEFAULT_THRESHOLD = 0.5  # what `core.llm.entities` uses unless told otherwise
THRESHOLD_GRID = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7)
VALIDATION_SEED = SEED + 1
VALIDATION_SIZE = 200
MODEL_CONFIG = {
    "hidden_size": 384,
    "span_mode": "markerV0",
    "max_width": 8,
    "words_splitter_type": "whitespace",
    "embed_ent_token": False,
    "dropout": 0.1,  # gliner's default 0.4 is meant for long pretraining runs, not a 500-step fit
}
TRAIN_SETTINGS = {
    "max_steps": 500,
    "learning_rate": 1e-4,
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
        extra={
            "config": MODEL_CONFIG,
            "train": TRAIN_SETTINGS,
            "seed": SEED,
            "prompt": "all labels per sentence",
            "validation": {"seed": VALIDATION_SEED, "size": VALIDATION_SIZE, "grid": THRESHOLD_GRID},
        }
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
    dataset = [training_row(ex) for ex in examples]
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


def training_row(example: corpus.Example) -> dict:
    """gliner's training row, prompted with every label: the absent ones as `ner_negatives`."""
    row = corpus.to_gliner(example)
    present = {label for *_, label in row["ner"]}
    row["ner_negatives"] = [label for label in ENTITY_LABELS if label not in present]
    return row


def validation_set(train_set: Sequence[corpus.Example]) -> list[corpus.Example]:
    """Fresh template sentences (another seed), none of them a training sentence."""
    seen = {ex.text for ex in train_set}
    fresh = corpus.generate_training(VALIDATION_SIZE + len(train_set), seed=VALIDATION_SEED)
    return [ex for ex in fresh if ex.text not in seen][:VALIDATION_SIZE]


def choose_threshold(model, examples: Sequence[corpus.Example]) -> tuple[float, dict[str, float]]:
    """The grid threshold with the best micro F1 on `examples` (ties: the one nearest 0.5).
    GLiNER's flat decoding is greedy by score, so the spans kept at threshold t are exactly the
    spans kept at a lower threshold with score >= t: one inference pass serves the whole grid."""
    texts = [ex.text for ex in examples]
    raw = []
    for i in range(0, len(texts), 16):
        batch = texts[i : i + 16]
        raw.extend(model.inference(batch, list(ENTITY_LABELS), threshold=min(THRESHOLD_GRID), batch_size=16))
    gold = [ex.spans for ex in examples]
    f1s = {}
    for t in THRESHOLD_GRID:
        pred = [[(e["start"], e["end"], e["label"]) for e in ents if e["score"] >= t] for ents in raw]
        f1s[f"{t:.2f}"] = round(score(gold, pred, ENTITY_LABELS)["micro"]["f1"], 4)
    best = max(THRESHOLD_GRID, key=lambda t: (f1s[f"{t:.2f}"], -abs(t - DEFAULT_THRESHOLD)))
    return best, f1s


def stored_threshold(model_dir: Path) -> float | None:
    """The threshold chosen at build time (None if the dir has no readable one); read by the same
    function the model layer uses at inference."""
    from core.llm.providers.gliner import threshold_in

    return threshold_in(model_dir)


def make_predictor(model, *, threshold: float = DEFAULT_THRESHOLD, progress: bool = False) -> PredictFn:
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
        tmp.chmod(0o755)  # mkdtemp makes it 0700; the installed model must be readable by the app user
        started = time.monotonic()
        train_set = corpus.generate_training()
        heldout = corpus.load_heldout()
        model = train(train_set, progress=progress)
        model.save_pretrained(str(tmp))
        train_seconds = time.monotonic() - started
        # Score the copy on disk, loaded the way the app loads it: proves it is loadable offline.
        reloaded = load_model(tmp)
        threshold, validation_f1 = choose_threshold(reloaded, validation_set(train_set))
        log(f"entity model: threshold {threshold} (template validation micro F1 by threshold: {validation_f1})")
        started = time.monotonic()
        metrics = evaluate(heldout, make_predictor(reloaded, threshold=threshold, progress=progress), ENTITY_LABELS)
        eval_seconds = time.monotonic() - started
        metrics.update(
            {
                "split": "heldout (hand-written, never trained on)",
                "threshold": threshold,
                "threshold_chosen_on": "template validation split (micro F1), not the held-out set",
                "validation_micro_f1_by_threshold": validation_f1,
                "train_sentences": len(train_set),
                "train_steps": TRAIN_SETTINGS["max_steps"],
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
        stamp = {
            "fingerprint": fingerprint,
            "labels": list(ENTITY_LABELS),
            "seed": SEED,
            "threshold": threshold,
            "files": files,
        }
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
