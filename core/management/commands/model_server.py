"""`manage.py model_server`: the embedded chat model in its own process (the `model` entry of
the Procfile). Serves every chat GGUF in the model cache under its name, over the OpenAI
protocol, on the host and port of OPENAI_BASE_URL (see core.llm.model_server for why)."""

from __future__ import annotations

from urllib.parse import urlparse

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.llm import assets


class Command(BaseCommand):
    help = "Serve the embedded chat models (llama.cpp) over the OpenAI protocol at OPENAI_BASE_URL."
    # It touches no database and no app: a model process must start whatever state the apps are in.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", help="default: the host of OPENAI_BASE_URL")
        parser.add_argument("--port", type=int, help="default: the port of OPENAI_BASE_URL")
        parser.add_argument("--access-log", action="store_true", help="log every request (off: one line at start)")

    def handle(self, *args, **options) -> None:
        import uvicorn

        from core.llm.model_server import build_app

        url = urlparse(settings.OPENAI_BASE_URL)
        host = options["host"] or url.hostname or "127.0.0.1"
        port = options["port"] or url.port or 8081
        default = settings.BLOOM_LLM.model if settings.BLOOM_LLM.provider == "openai" else None
        names = sorted(assets.CHAT_MODELS, key=lambda name: name != default)  # the default loads first
        models = {name: assets.chat_model_path(name) for name in names if assets.chat_model_path(name).is_file()}
        if not models:
            raise CommandError("no chat model in the model cache: run `python manage.py bloom_models`")
        self.stdout.write(f"model server: {', '.join(models)} on http://{host}:{port}/v1 "
                          f"({settings.BLOOM_LLM_THREADS} threads, context {settings.BLOOM_LLM_CONTEXT})")
        app = build_app(models, n_ctx=settings.BLOOM_LLM_CONTEXT, n_threads=settings.BLOOM_LLM_THREADS,
                        api_key=settings.OPENAI_API_KEY or None)
        uvicorn.run(app, host=host, port=port, log_level="info" if options["access_log"] else "warning",
                    access_log=options["access_log"])
