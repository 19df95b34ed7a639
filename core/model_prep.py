"""What `manage.py bloom_models` still has to prepare after chat can start.

`make run` builds only what a chat reply needs before the server starts (`bloom_models --for-chat`:
the chat GGUFs and the exact MiniLM graph) and leaves the rest — the GLiNER entity model (about
5 minutes of training on 2 cores) and MiniLM's int8 query graph — to `bloom_models --background`,
the `prepare` process of the Procfile. The two share one small JSON file under BLOOM_VAR_DIR so
that /healthz can say what is still being prepared instead of calling a missing model a failure.

States of a background part: "queued" (the chat-first step ran, the background step has not
started), "running", "done", "failed" (with the error line). The file is written atomically.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from django.conf import settings

# The parts chat does not need, in the order the background step builds them.
BACKGROUND_PARTS = {
    "entities": "the GLiNER entity model (trained here, about 5 min on 2 cores)",
    "query_embeddings": "MiniLM's int8 query graph (search queries use the exact graph meanwhile)",
}
FILE_NAME = "model_prep.json"


def status_path() -> Path:
    return Path(settings.VAR_DIR) / FILE_NAME


def read_status() -> dict[str, Any]:
    """{part: {"state": ..., "since": epoch seconds, "error": ...}}; {} when nothing was recorded."""
    try:
        data = json.loads(status_path().read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def mark(part: str, state: str, *, error: str = "") -> None:
    if part not in BACKGROUND_PARTS:
        raise ValueError(f"unknown background part {part!r}")
    data = read_status()
    data[part] = {"state": state, "since": time.time(), **({"error": error} if error else {})}
    path = status_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)


def pending(part: str) -> dict[str, Any] | None:
    """The record of a part that is queued or being built now, else None."""
    record = read_status().get(part)
    if isinstance(record, dict) and record.get("state") in ("queued", "running"):
        return record
    return None


def preparing_line(part: str) -> str | None:
    """One line for /healthz while `part` is queued or running; None when it is not pending."""
    record = pending(part)
    if record is None:
        return None
    since = max(0.0, time.time() - float(record.get("since", time.time())))
    what = BACKGROUND_PARTS[part]
    if record["state"] == "queued":
        return f"queued for the background step (`manage.py bloom_models --background`): {what}"
    return f"being prepared in the background for {since:.0f}s: {what}"


def preparing_now() -> list[str]:
    """The parts still queued or being built (what /healthz lists under "preparing")."""
    return [part for part in BACKGROUND_PARTS if pending(part) is not None]
