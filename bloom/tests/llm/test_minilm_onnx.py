"""The ONNX MiniLM (real weights, exported into a temporary model cache): the same vectors as the
torch path within 1e-4, used by the provider only while it matches the installed weights; and the
int8 query graph made from it, used for search queries only and only when it passed its check."""

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


def test_bloom_models_embeddings_verifies_what_is_there(exported, quantised):
    out = io.StringIO()
    with override_settings(BLOOM_MODEL_CACHE=str(exported.path.parent.parent)):
        call_command("bloom_models", "--only", "embeddings", "--no-progress", stdout=out)
    minilm_onnx.reset()
    assert out.getvalue().count("embeddings: present") == 2 and "nothing to do" in out.getvalue()
    assert "int8 query graph, min cosine" in out.getvalue()


# --- the int8 query graph ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def quantised(exported):
    with override_settings(BLOOM_MODEL_CACHE=str(exported.path.parent.parent)):
        minilm_onnx.reset()
        result = minilm_onnx.export_query()
    minilm_onnx.reset()
    return result


def _cos(a, b) -> np.ndarray:
    a, b = np.asarray(a), np.asarray(b)
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def test_query_graph_is_checked_against_the_exact_graph_and_is_idempotent(exported, quantised):
    assert quantised.status == "built" and quantised.min_cosine >= minilm_onnx.QUERY_MIN_COSINE
    assert quantised.path.stat().st_size < exported.path.stat().st_size / 2  # int8 weights
    stamp = minilm_onnx._read_stamp(quantised.path)
    assert len(stamp["float_matmuls"]) == 6  # one feed-forward down-projection per layer stays float
    with override_settings(BLOOM_MODEL_CACHE=str(exported.path.parent.parent)):
        assert minilm_onnx.export_query().status == "present"


def test_only_queries_take_the_int8_graph(exported, quantised):
    """query=True: the int8 graph (close to, not equal to, the exact vector); query=False, or
    BLOOM_QUERY_EMBEDDINGS=exact: the exact vectors. A stored vector is never an int8 one."""
    exact = minilm._encode_direct(minilm.load(), TEXTS)
    provider = minilm.MiniLMEmbeddings()
    with override_settings(BLOOM_MODEL_CACHE=str(exported.path.parent.parent)):
        minilm_onnx.reset()
        as_query = [provider.embed("all-MiniLM-L6-v2", [t], timeout=10, query=True)[0][0] for t in TEXTS]
        stored, _ = provider.embed("all-MiniLM-L6-v2", TEXTS, timeout=10)
        assert "queries int8" in provider.health("all-MiniLM-L6-v2")[1]
        with override_settings(BLOOM_QUERY_EMBEDDINGS="exact"):
            exact_query = [provider.embed("all-MiniLM-L6-v2", [t], timeout=10, query=True)[0][0] for t in TEXTS]
            assert "queries exact" in provider.health("all-MiniLM-L6-v2")[1]
    minilm_onnx.reset()
    assert np.max(np.abs(np.asarray(stored) - exact)) <= 1e-4
    assert np.max(np.abs(np.asarray(exact_query) - exact)) <= 1e-4
    assert np.max(np.abs(np.asarray(as_query) - exact)) > 1e-3  # the int8 graph did run
    assert _cos(as_query, exact).min() >= minilm_onnx.QUERY_MIN_COSINE


def test_a_query_graph_that_loses_too_much_is_not_installed(exported, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    (cache / "minilm").mkdir(parents=True)
    for src in (exported.path, minilm_onnx._stamp_path(exported.path)):
        (cache / "minilm" / src.name).write_bytes(src.read_bytes())
    monkeypatch.setattr(minilm_onnx, "QUERY_MIN_COSINE", 0.99999)  # stricter than int8 can be
    with override_settings(BLOOM_MODEL_CACHE=str(cache)):
        minilm_onnx.reset()
        with pytest.raises(minilm_onnx.ExportError, match="worst cosine"):
            minilm_onnx.export_query()
        assert not minilm_onnx.query_path().exists() and minilm_onnx.session("query") is None
        vectors, _ = minilm.MiniLMEmbeddings().embed("all-MiniLM-L6-v2", TEXTS[:2], timeout=10, query=True)
    minilm_onnx.reset()
    assert np.max(np.abs(np.asarray(vectors) - minilm._encode_direct(minilm.load(), TEXTS[:2]))) <= 1e-4


def test_a_query_graph_from_other_weights_is_not_used(exported, quantised, tmp_path):
    cache = tmp_path / "cache"
    (cache / "minilm").mkdir(parents=True)
    for src in (exported.path, minilm_onnx._stamp_path(exported.path), quantised.path):
        (cache / "minilm" / src.name).write_bytes(src.read_bytes())
    minilm_onnx._stamp_path(cache / "minilm" / quantised.path.name).write_text('{"weights_sha256": "0000"}')
    with override_settings(BLOOM_MODEL_CACHE=str(cache)):
        minilm_onnx.reset()
        assert minilm_onnx.session("query") is None and minilm_onnx.session() is not None
    minilm_onnx.reset()


def test_a_query_graph_needs_a_current_exact_graph(tmp_path):
    with override_settings(BLOOM_MODEL_CACHE=str(tmp_path)):
        minilm_onnx.reset()
        with pytest.raises(minilm_onnx.ExportError, match="no current exact ONNX graph"):
            minilm_onnx.export_query()
    minilm_onnx.reset()


def test_a_query_graph_is_checked_again_on_the_cpu_that_loads_it(exported, quantised, monkeypatch):
    """A model cache made on another machine carries a verdict about that machine's int8 kernels:
    each process checks the graph again before its first query (here the bound is made stricter
    than int8 can be, as a CPU whose kernels lose too much would make it)."""
    monkeypatch.setattr(minilm_onnx, "QUERY_MIN_COSINE", 0.99999)
    with override_settings(BLOOM_MODEL_CACHE=str(exported.path.parent.parent)):
        minilm_onnx.reset()
        assert minilm_onnx.is_current(quantised.path)  # the stamp alone would have said yes
        assert minilm_onnx.session("query") is None and minilm_onnx.session() is not None
        vectors, _ = minilm.MiniLMEmbeddings().embed("all-MiniLM-L6-v2", TEXTS[:2], timeout=10, query=True)
    minilm_onnx.reset()
    assert np.max(np.abs(np.asarray(vectors) - minilm._encode_direct(minilm.load(), TEXTS[:2]))) <= 1e-4


def test_a_query_graph_built_after_the_process_started_is_taken_up(exported, quantised, tmp_path):
    """`make run` builds the int8 graph in the background after the web process started: the
    process that found it missing takes it once it is there (graph and stamp), without a restart."""
    cache = tmp_path / "cache"
    (cache / "minilm").mkdir(parents=True)
    for src in (exported.path, minilm_onnx._stamp_path(exported.path)):
        (cache / "minilm" / src.name).write_bytes(src.read_bytes())
    with override_settings(BLOOM_MODEL_CACHE=str(cache)):
        minilm_onnx.reset()
        assert minilm_onnx.session("query") is None  # not built yet
        graph = cache / "minilm" / quantised.path.name
        graph.write_bytes(quantised.path.read_bytes())
        assert minilm_onnx.session("query") is None  # half written: no stamp yet
        minilm_onnx._stamp_path(graph).write_bytes(minilm_onnx._stamp_path(quantised.path).read_bytes())
        assert minilm_onnx.session("query") is not None
    minilm_onnx.reset()
