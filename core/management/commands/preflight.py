"""`manage.py preflight`: is every part Bloom needs configured and reachable?

Prints one line per part and exits non-zero with one clear line naming the failing part and the
environment variable that configures it. Configuration that cannot even be parsed never gets
here: settings raise `ConfigError` and manage.py prints it (exit 2).
"""

from __future__ import annotations

from urllib.parse import urlparse

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser


def _listening(url: str) -> bool:
    """Is anything accepting connections at the URL's host and port (a server not started yet vs one
    that answers badly)?"""
    import socket

    parsed = urlparse(url)
    try:
        with socket.create_connection((parsed.hostname, parsed.port or 80), timeout=1):
            return True
    except OSError:
        return False


# Which environment variable an operator changes to fix each part.
PART_VARIABLES = {
    "database": "DATABASE_URL",
    "broker": "CELERY_BROKER_URL",
    "llm": "BLOOM_LLM",
    "embeddings": "BLOOM_EMBEDDINGS",
    "entities": "BLOOM_ENTITY_MODEL",
}


class Command(BaseCommand):
    help = "Check configuration and every required part (database + pgvector, broker, models)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--skip-models",
            action="store_true",
            help="Check only the database and the broker (models load slowly on small machines).",
        )

    def _llm_part(self, part: dict) -> dict:
        """The chat model must generate, proven in a child process (a crashing llama.cpp build kills
        the process that runs it). For the embedded model server, which `make run` starts only after
        preflight, a server that is not running yet is expected: the smoke generation stands in."""
        from core.llm import assets
        from core.llm.smoke import smoke_generation

        spec = settings.BLOOM_LLM
        local = spec.provider == "llamacpp" or (
            spec.provider == "openai" and spec.model in assets.CHAT_MODELS
            and urlparse(settings.OPENAI_BASE_URL).hostname in ("127.0.0.1", "localhost", "::1"))
        if not local:
            return part
        smoke = smoke_generation(assets.chat_model_path(spec.model))
        if not smoke.ok:
            return {"ok": False, "reason": smoke.line}
        if not part["ok"] and spec.provider == "openai" and not _listening(settings.OPENAI_BASE_URL):
            return {"ok": True, "reason": f"{smoke.line}; the model server at {settings.OPENAI_BASE_URL} "
                                          f"is not running yet (`make run` starts it)"}
        return {"ok": part["ok"], "reason": f"{part['reason']}; {smoke.line}"}

    def handle(self, *args, **options) -> None:
        from core import health

        if options["skip_models"]:
            db_ok, db_reason, db_extra = health.check_database()
            broker_ok, broker_reason = health.check_broker()
            parts = {
                "database": {"ok": db_ok, "reason": db_reason, **db_extra},
                "broker": {"ok": broker_ok, "reason": broker_reason},
            }
        else:
            parts = health.collect_health()
            parts["llm"] = self._llm_part(parts["llm"])
        mode = "production" if not settings.EMBEDDED else "embedded"
        broker = settings.CELERY_BROKER_URL.split(":", 1)[0]
        self.stdout.write(f"bloom preflight ({mode}: {settings.DB_VENDOR}, broker {broker})")
        failures: list[str] = []
        for name, part in parts.items():
            variable = PART_VARIABLES.get(name, name)
            mark = "ok  " if part["ok"] else "FAIL"
            self.stdout.write(f"  {mark} {name:<11} {part['reason']}")
            if not part["ok"]:
                failures.append(f"{name} ({variable}): {part['reason']}")
        if failures:
            # The first failure is usually the cause of the rest (no database -> nothing works).
            more = f" (+{len(failures) - 1} more above)" if len(failures) > 1 else ""
            raise CommandError(f"preflight failed: {failures[0]}{more}", returncode=3)
        self.stdout.write(self.style.SUCCESS("preflight: every part is ok"))
