"""Health of every part Bloom needs. Used by GET /healthz and `manage.py preflight`."""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.db import connection
from django.http import JsonResponse


def check_database() -> tuple[bool, str, dict[str, Any]]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            if connection.vendor == "postgresql":
                cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
                row = cursor.fetchone()
                if row is None:
                    reason = "PostgreSQL has no 'vector' extension (run scripts/prepare_services.sh)"
                    return False, reason, {"vector": False}
                return True, f"postgresql, vector {row[0]}", {"vector": True}
    except Exception as exc:
        return False, f"{type(exc).__name__}: {exc}".strip().splitlines()[0], {"vector": False}
    return True, "sqlite (exact vector scan)", {"vector": False}


def check_broker() -> tuple[bool, str]:
    url = settings.CELERY_BROKER_URL
    if url.startswith("filesystem://"):
        folder = settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"]
        if os.path.isdir(folder) and os.access(folder, os.W_OK):
            return True, f"filesystem broker at {folder}"
        return False, f"filesystem broker folder {folder} is not writable"
    from kombu import Connection

    try:
        with Connection(url, connect_timeout=2) as conn:
            conn.ensure_connection(max_retries=1, interval_start=0, timeout=2)
        return True, "broker reachable"
    except Exception as exc:
        return False, f"broker unreachable: {type(exc).__name__}: {exc}".splitlines()[0]


def collect_health() -> dict[str, dict[str, Any]]:
    from core import llm

    db_ok, db_reason, db_extra = check_database()
    broker_ok, broker_reason = check_broker()
    parts: dict[str, dict[str, Any]] = {
        "database": {"ok": db_ok, "reason": db_reason, **db_extra},
        "broker": {"ok": broker_ok, "reason": broker_reason},
    }
    for name, (ok, reason) in llm.health().items():
        parts[name] = {"ok": ok, "reason": reason}
    _entities_while_preparing(parts)
    return parts


def _entities_while_preparing(parts: dict[str, dict[str, Any]]) -> None:
    """A missing entity model that the background step is building is not a failure: chat works
    without it, and facts stored meanwhile get their entities when it is ready (the catch-up task,
    memory.entities_catch_up). Once the step failed, the part fails with its error."""
    from core import model_prep

    entities = parts.get("entities")
    if entities is None or entities["ok"]:
        return
    line = model_prep.preparing_line("entities")
    if line is not None:
        parts["entities"] = {"ok": True, "preparing": True,
                             "reason": f"{line}; facts stored meanwhile get their entities when it is ready"}
        return
    record = model_prep.read_status().get("entities") or {}
    if record.get("state") == "failed":
        entities["reason"] = f"the background step failed to build it: {record.get('error', '')}".rstrip(": ")


def healthz(request):
    from core import model_prep

    parts = collect_health()
    ok = all(part["ok"] for part in parts.values())
    from core.llm import job_model

    body = {"status": "ok" if ok else "degraded", "parts": parts, "preparing": model_prep.preparing_now(),
            "models": {job: job_model(job) for job in ("chat", "extraction", "summary", "judge")}}
    return JsonResponse(body, status=200 if ok else 503)
