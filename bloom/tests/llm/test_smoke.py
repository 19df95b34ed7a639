"""The install-time smoke generation: a child process that crashes, hangs or fails becomes one
line naming the cause and the fix; the real llama.cpp build generates."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from core.llm import assets
from core.llm.smoke import explain, smoke_generation

GGUF = Path("model.gguf")


@pytest.mark.parametrize(("returncode", "words"), [
    (-signal.SIGSEGV, ["SIGSEGV", "AMX", "rebuild llama.cpp", "make install"]),
    (-signal.SIGILL, ["illegal instruction", "another CPU", "rebuild llama.cpp"]),
    (-signal.SIGKILL, ["SIGKILL", "out of memory"]),
    (1, ["exit 1", "boom"]),
])
def test_each_kind_of_failure_is_one_line_with_the_fix(returncode, words):
    result = explain(returncode, "Traceback...\nValueError: boom", model=GGUF, timeout=60, timed_out=False)
    assert not result.ok and "\n" not in result.line
    for word in words:
        assert word in result.line


def test_a_hang_names_the_timeout():
    result = explain(-1, "", model=GGUF, timeout=60, timed_out=True)
    assert not result.ok and "within 60s" in result.line and "rebuild" in result.line


def test_a_real_crash_in_the_child_is_reported_not_inherited(tmp_path, monkeypatch):
    """The child really dies of SIGSEGV (a stand-in interpreter that kills itself); the parent
    survives and reports it."""
    crasher = tmp_path / "python"
    crasher.write_text(f"#!{sys.executable}\nimport os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    crasher.chmod(0o755)
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setattr(sys, "executable", str(crasher))
    result = smoke_generation(model, timeout=30)
    assert not result.ok and "SIGSEGV" in result.line


def test_the_installed_llama_cpp_generates_with_the_default_model():
    path = assets.chat_model_path(assets.DEFAULT_CHAT_MODEL)
    if not path.is_file():
        pytest.skip("chat model not assembled: run `python manage.py bloom_models`")
    result = smoke_generation(path)
    assert result.ok, result.line
    assert result.tokens_per_s > 0 and "generated" in result.line
