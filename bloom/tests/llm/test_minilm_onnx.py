"""The ONNX MiniLM (real weights, exported into a temporary model cache): the same vectors as the
torch path within 1e-4, used by the provider only while it matches the installed weights."""

from __future__ import annotations

import io

import numpy as np
import pytest
from django.core.management import call_command
from django.test import override_settings

from core.llm.providers import minilm, minilm_onnx

pytest.importorskip("onnxruntime")

TEXTS = ["Maya: I bought an electric scooter! No more waiting for the bus in the cold.",
         "Did Maya rely on public transport before?", "ok", "Tom: I started a pottery class on Tuesdays. " * 20]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    cache = tmp_path_factory.mktemp("model-cache")
    with override_settings(BLOOM_MODEL_CACHE=str(cache)):
        minilm_onnx.reset()
        result = minilm_onnx.export()
        yield result
    minilm_onnx.reset()


def test_export_reproduces_torch_and_is_idempotent(exported):
    assert exported.status == "built" and exported.max_abs_diff <= minilm_onnx.EXPORT_TOLERANCE
    with override_settings(BLOOM_MODEL_CACHE=str(exported.path.parent.parent)):
        assert minilm_onnx.is_current() and minilm_onnx.export().status == "present"


def test_provider_uses_onnx_with_the_same_vectors_single_and_batched(exported):
    encoder = minilm.load()
    torch_vectors = minilm._encode_direct(encoder, TEXTS)
    with override_settings(BLOOM_MODEL_CACHE=str(exported.path.parent.parent)):
        minilm_onnx.reset()
        assert minilm_onnx.session() is not None
        provider = minilm.MiniLMEmbeddings()
        batched, _ = provider.embed("all-MiniLM-L6-v2", TEXTS, timeout=10)
        single = [provider.embed("all-MiniLM-L6-v2", [t], timeout=10)[0][0] for t in TEXTS]
        assert "onnxruntime" in provider.health("all-MiniLM-L6-v2")[1]
    minilm_onnx.reset()
    assert np.max(np.abs(np.asarray(batched) - torch_vectors)) <= 1e-4
    assert np.max(np.abs(np.asarray(single) - torch_vectors)) <= 1e-4


def test_a_graph_made_from_other_weights_is_not_used(exported, tmp_path):
    stale = tmp_path / "minilm" / minilm_onnx.ONNX_FILENAME
    stale.parent.mkdir()
    stale.write_bytes(exported.path.read_bytes())
    minilm_onnx._stamp_path(stale).write_text('{"weights_sha256": "0000"}')
    with override_settings(BLOOM_MODEL_CACHE=str(tmp_path)):
        minilm_onnx.reset()
        assert not minilm_onnx.is_current() and minilm_onnx.session() is None
        vectors, _ = minilm.MiniLMEmbeddings().embed("all-MiniLM-L6-v2", TEXTS[:1], timeout=10)  # torch
    minilm_onnx.reset()
    assert np.max(np.abs(np.asarray(vectors) - minilm._encode_direct(minilm.load(), TEXTS[:1]))) <= 1e-6


def test_bloom_models_embeddings_verifies_what_is_there(exported):
    out = io.StringIO()
    with override_settings(BLOOM_MODEL_CACHE=str(exported.path.parent.parent)):
        call_command("bloom_models", "--only", "embeddings", "--no-progress", stdout=out)
    minilm_onnx.reset()
    assert "embeddings: present" in out.getvalue() and "nothing to do" in out.getvalue()
