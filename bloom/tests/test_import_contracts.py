"""The layer rule is live: on a copy of the source, the import contracts pass as the code stands and
fail when a lower layer imports a higher one (the same check `make lint` runs in CI)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "telemetry", "memory", "coaching", "evaluation", "bloom")
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


@pytest.fixture(scope="module")
def source_copy(tmp_path_factory) -> Path:
    copy = tmp_path_factory.mktemp("layers")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, copy / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(ROOT / ".importlinter", copy / ".importlinter")
    return copy


def _lint(where: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=where, capture_output=True, text=True,
                          timeout=300, env={"PYTHONPATH": str(where), "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize("lower, higher", [("memory/selectors.py", "coaching.models"),
                                           ("core/errors.py", "telemetry.models"),
                                           ("coaching/turn/router.py", "evaluation.checks")])
def test_a_lower_layer_importing_a_higher_one_breaks_the_contract(source_copy, lower, higher):
    target = source_copy / lower
    original = target.read_text()
    target.write_text(original + f"\nimport {higher}  # deliberate violation\n")
    try:
        result = _lint(source_copy)
    finally:
        target.write_text(original)
    assert result.returncode != 0, result.stdout
    assert "BROKEN" in result.stdout and higher in result.stdout


def test_the_code_as_it_stands_keeps_every_contract(source_copy):
    result = _lint(source_copy)
    assert result.returncode == 0, result.stdout
