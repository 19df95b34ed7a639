"""Bad configuration stops start-up with one clear line naming the variable (exit code 2)."""

from __future__ import annotations

import pytest

from bloom.tests._subprocess import run_manage


@pytest.mark.parametrize(
    ("env", "variable", "detail"),
    [
        ({"BLOOM_LLM": "anthropic:claude"}, "BLOOM_LLM", "unknown provider 'anthropic'"),
        ({"OPENAI_BASE_URL": "127.0.0.1:8081"}, "OPENAI_BASE_URL", "not an http(s) URL"),
        ({"OPENAI_BASE_URL": "http://127.0.0.1:port/v1"}, "OPENAI_BASE_URL", "bad port"),
        ({"BLOOM_TORCH_THREADS": "0"}, "BLOOM_TORCH_THREADS", "must be >= 1"),
        ({"BLOOM_LLM": "llamacpp"}, "BLOOM_LLM", "missing model name"),
        ({"BLOOM_EMBEDDINGS": "word2vec:x"}, "BLOOM_EMBEDDINGS", "unknown provider 'word2vec'"),
        ({"BLOOM_EXTRACTION_LLM": "gpt4"}, "BLOOM_EXTRACTION_LLM", "unknown provider 'gpt4'"),
        ({"BLOOM_SUMMARY_LLM": "ollama:"}, "BLOOM_SUMMARY_LLM", "missing model name"),
        ({"BLOOM_JUDGE_LLM": "vllm:qwen"}, "BLOOM_JUDGE_LLM", "unknown provider 'vllm'"),
        ({"DATABASE_URL": "mysql://root@db/bloom"}, "DATABASE_URL", "malformed or unsupported"),
        ({"DATABASE_URL": "postgres://postgres@127.0.0.1:5432"}, "DATABASE_URL", "no database name"),
        ({"DATABASE_URL": "postgres://postgres@127.0.0.1:notaport/bloom"}, "DATABASE_URL", "bad port"),
        ({"CELERY_BROKER_URL": "kafka://127.0.0.1:9092"}, "CELERY_BROKER_URL", "unsupported broker"),
        ({"DEBUG": "maybe"}, "DEBUG", "not a boolean"),
        ({"DEBUG": "0", "SECRET_KEY": ""}, "SECRET_KEY", "must be set"),
        ({"BLOOM_MEMORY_DEDUP_COSINE": "high"}, "BLOOM_MEMORY_DEDUP_COSINE", "not a number"),
        ({"BLOOM_MEMORY_SURPRISE_COSINE": "1.5"}, "BLOOM_MEMORY_SURPRISE_COSINE", "must be > 0 and <= 1"),
        ({"BLOOM_MEMORY_TIER_WARM_MIN": "0.8"}, "BLOOM_MEMORY_TIER_WARM_MIN", "must be <= BLOOM_MEMORY_TIER_HOT_MIN"),
        ({"BLOOM_ENTITY_THRESHOLD": "2"}, "BLOOM_ENTITY_THRESHOLD", "must be between 0 and 1"),
    ],
)
@pytest.mark.parametrize("command", ["check", "preflight"])
def test_bad_configuration_is_one_line_and_exit_2(command, env, variable, detail):
    result = run_manage(command, env=env)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1, f"expected exactly one line, got:\n{result.stderr}"
    assert lines[0].startswith("bloom: configuration error: ")
    assert variable in lines[0] and detail in lines[0]
    assert "Traceback" not in result.stderr + result.stdout


def test_good_configuration_passes_the_same_entry_point():
    # The control case: without the bad variable the same command starts fine, so the test above
    # fails for the variable and not for an unrelated start-up problem.
    result = run_manage("check", env={})
    assert result.returncode == 0, result.stderr
    assert "configuration error" not in result.stderr
