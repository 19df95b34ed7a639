"""One configuration surface: every environment variable is parsed in bloom/settings.py (through
the core.env helpers) and documented in the README's configuration table, and no other module of
the application reads the environment. These are source checks on purpose: a variable read at run
time somewhere else would never show up in a behavioural test until someone set it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP_PACKAGES = ("core", "bloom", "telemetry", "memory", "coaching", "evaluation")
ENV_HELPERS = {"env_str", "env_bool", "env_int", "env_float", "env_choice"}
# Allowed readers: the settings module and the helpers it parses with.
READERS = {ROOT / "bloom" / "settings.py", ROOT / "core" / "env.py"}


def _settings_variables() -> set[str]:
    tree = ast.parse((ROOT / "bloom" / "settings.py").read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ENV_HELPERS \
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            names.add(node.args[0].value)
    return names


def _readme_variables() -> set[str]:
    table_rows = [line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("| `")]
    return {name for row in table_rows for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row.split("|")[1])}


def _environment_reads(path: Path) -> list[int]:
    """Lines that read os.environ / os.getenv (writing a default for a child process is not reading)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text())):
        environ = node.attr == "environ" and isinstance(node.value, ast.Name) and node.value.id == "os" \
            if isinstance(node, ast.Attribute) else False
        if environ or (isinstance(node, ast.Attribute) and node.attr == "getenv"):
            lines.append(node.lineno)
    return lines


def _writes_only(path: Path, line: int) -> bool:
    text = path.read_text().splitlines()[line - 1]
    return bool(re.search(r"os\.environ\.setdefault\(|os\.environ\[[^\]]+\]\s*=[^=]", text))


def test_every_variable_settings_reads_is_documented_in_the_readme():
    missing = sorted(_settings_variables() - _readme_variables())
    assert not missing, f"document these in the README configuration table: {', '.join(missing)}"


def test_the_readme_documents_no_variable_that_nothing_reads():
    # A documented variable that settings never reads is a promise nothing keeps.
    read = _settings_variables() | {"OPENAI_API_KEY"}  # read by the openai client itself
    stale = sorted(_readme_variables() - read)
    assert not stale, f"the README documents variables settings does not read: {', '.join(stale)}"


def test_no_application_module_reads_the_environment_outside_settings():
    offenders = []
    for package in APP_PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if path in READERS or "tests" in path.relative_to(ROOT).parts or "migrations" in path.parts:
                continue
            offenders += [f"{path.relative_to(ROOT)}:{line}" for line in _environment_reads(path)
                          if not _writes_only(path, line)]
    assert not offenders, "read these through django.conf.settings instead: " + ", ".join(offenders)
