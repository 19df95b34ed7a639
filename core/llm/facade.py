"""The model layer's one entry point per kind of model. Every call goes through `_Attempt`, which
builds a `CallRecord` from the current call context and tells observers (telemetry) about its
start and end — success, typed error or a stream abandoned mid-way — so no caller can forget to
record. Retries (transient errors only) and the per-provider circuit breaker live here too.

Boundary: this layer decides nothing about *what* to ask. Routing, limits and checks are code in
the callers; the model only produces text / structured output / tool choices."""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from core.env import EMBEDDING_PROVIDERS, LLM_PROVIDERS, ModelSpec
from core.llm import providers
from core.llm.context import CallContext, current_context
from core.llm.observers import CallRecord, notify
from core.llm.priority import BACKGROUND, LLMPreempted, YieldBudget, yielding_enabled
from core.llm.providers.base import ChatRequest, Done, Token
from core.llm.providers.common import validate_messages
from core.llm.resilience import backoff_delay, breaker
from core.llm.settings import llm_setting
from core.llm.types import (
    ChatResult,
    ChatStream,
    EntitySpan,
    LLMError,
    LLMInvalidOutput,
    LLMOverloaded,
    ToolSpec,
)

T = TypeVar("T")


class _Attempt:
    """One model call as observers see it: on_start now, on_end exactly once."""

    def __init__(self, *, operation: str, provider: str, model: str, ctx: CallContext, prompt: Any,
                 attempt: int = 0):
        self.record = CallRecord(call_id=uuid.uuid4().hex, operation=operation, provider=provider,
                                 request_model=model, context=ctx, started_at=time.time(), prompt=prompt)
        if attempt:
            self.record.extra["attempt"] = attempt
        self._t0 = time.perf_counter()
        self._ended = False
        notify("on_start", self.record)

    def first_token(self) -> None:
        if self.record.time_to_first_token_s is None:
            self.record.time_to_first_token_s = time.perf_counter() - self._t0

    def elapsed(self) -> float:
        return time.perf_counter() - self._t0

    def end_ok(self, *, response: Any = None, result: ChatResult | None = None) -> None:
        if result is not None:
            self.record.response_model = result.response_model
            self.record.input_tokens = result.usage.input_tokens
            self.record.output_tokens = result.usage.output_tokens
            self.record.finish_reason = result.finish_reason
            if self.record.time_to_first_token_s is None and result.time_to_first_token_s is not None:
                self.record.time_to_first_token_s = result.time_to_first_token_s
            if result.queued_s:
                self.record.extra["queued_s"] = round(result.queued_s, 3)
            if response is None:
                response = result.text if not result.tool_calls else [
                    {"name": c.name, "arguments": c.arguments} for c in result.tool_calls]
        self.record.response = response
        self._end("ok")

    def end_error(self, exc: BaseException, *, status: str | None = None) -> None:
        self.record.error_type = type(exc).__name__
        self.record.error_message = str(exc)[:2000]
        self._end(status or getattr(exc, "status", "error"))

    def end_cancelled(self) -> None:
        self.record.error_type = "Cancelled"
        self.record.error_message = "stream abandoned by the consumer before it finished"
        self._end("cancelled")

    def _end(self, status: str) -> None:
        if self._ended:
            return
        self._ended = True
        self.record.status = status
        self.record.duration_s = self.elapsed()
        notify("on_end", self.record)


def _with_retries(*, operation: str, provider: str, model: str, prompt: Any,
                  run: Callable[[_Attempt], T], budget: YieldBudget | None = None) -> T:
    """Run `run` under the breaker with retries for transient errors; one record per attempt.
    With a `budget` (a background call) each attempt first waits until no learner's turn is
    running, and an attempt preempted by a turn is recorded and started again — not a failure,
    not a retry (the budget bounds it)."""
    ctx = current_context()
    circuit = breaker(provider)
    retries = int(llm_setting("BLOOM_LLM_RETRIES", 2))
    attempt_no = 0
    while True:
        yielded_s = budget.wait_until_idle() if budget is not None else 0.0
        attempt = _Attempt(operation=operation, provider=provider, model=model, ctx=ctx, prompt=prompt,
                           attempt=attempt_no)
        if budget is not None:
            attempt.record.extra.update({"priority": BACKGROUND, "yielded_s": round(yielded_s, 3)})
        try:
            circuit.before_call()
        except LLMOverloaded as exc:
            attempt.record.extra["circuit_open"] = True
            attempt.end_error(exc)
            raise
        try:
            value = run(attempt)
        except LLMPreempted as exc:
            attempt.end_error(exc)  # status "preempted": the row shows the abandoned work; the budget bounds restarts
            continue
        except LLMError as exc:
            attempt.end_error(exc)
            if not exc.transient:
                circuit.success()  # the backend answered; the request itself was bad
                raise
            circuit.failure()
            if attempt_no >= retries:
                raise
            time.sleep(backoff_delay(attempt_no, exc.retry_after))
            attempt_no += 1
            continue
        except BaseException as exc:
            attempt.end_error(exc)
            raise
        circuit.success()
        return value


# --- chat ----------------------------------------------------------------------------------------
def resolve_chat_model(model: str | None) -> ModelSpec:
    """`None` → settings.BLOOM_LLM; otherwise "provider:name" (the name may contain colons)."""
    if model is None:
        spec = llm_setting("BLOOM_LLM", None)
        if spec is None:
            from core.env import DEFAULT_LLM

            model = DEFAULT_LLM
        else:
            return spec
    provider, sep, name = str(model).partition(":")
    if provider not in LLM_PROVIDERS or not sep or not name:
        raise ValueError(f"model={model!r}: expected 'provider:name' with provider one of {', '.join(LLM_PROVIDERS)}")
    return ModelSpec(provider=provider, model=name)


JOB_SETTINGS = {"chat": "BLOOM_LLM", "extraction": "BLOOM_EXTRACTION_LLM", "summary": "BLOOM_SUMMARY_LLM",
                "judge": "BLOOM_JUDGE_LLM", "reading": "BLOOM_READING_LLM"}


def job_model(job: str) -> str:
    """The model of one job ("chat", "extraction", "summary", "judge", "reading") as "provider:model": its own
    setting when set, else BLOOM_LLM's — except the reader under the embedded default chat model,
    which uses the 0.5B served beside it (core.env.DEFAULT_READING_LLM)."""
    if job not in JOB_SETTINGS:
        raise ValueError(f"unknown job {job!r} (expected one of: {', '.join(JOB_SETTINGS)})")
    spec = llm_setting(JOB_SETTINGS[job], None)
    if spec is None:
        chat = resolve_chat_model(None)
        from core.env import DEFAULT_LLM, DEFAULT_READING_LLM

        if job == "reading" and f"{chat.provider}:{chat.model}" == DEFAULT_LLM:
            return DEFAULT_READING_LLM  # the embedded default: the reader uses the small model beside it
        spec = chat
    return f"{spec.provider}:{spec.model}"


def _request(spec: ModelSpec, messages, tools, schema, options) -> ChatRequest:
    validate_messages(messages)
    if tools is not None and (not isinstance(tools, list) or not all(isinstance(t, ToolSpec) for t in tools)):
        raise ValueError("tools must be a list of ToolSpec")
    if tools and schema is not None:
        raise ValueError("pass either tools or schema, not both")
    if schema is not None and not isinstance(schema, dict):
        raise ValueError("schema must be a JSON schema dict")
    options = dict(options or {})
    timeout = float(options.pop("timeout", llm_setting("BLOOM_LLM_TIMEOUT", 120.0)))
    return ChatRequest(model=spec.model, messages=messages, tools=tools or None, schema=schema,
                       options=options, timeout=timeout)


def chat(messages: list[dict[str, Any]], *, tools: list[ToolSpec] | None = None, schema: dict | None = None,
         stream: bool = False, options: dict[str, Any] | None = None, model: str | None = None,
         operation: str = "chat") -> ChatResult | ChatStream:
    """One chat call. `options`: max_tokens, temperature, seed, top_p, top_k, stop, timeout,
    keep_alive (Ollama), plain_text (decode one paragraph of plain text where the provider takes a
    grammar, core/llm/grammars.py). With `schema`, `.parsed` holds the schema-valid object; with `tools`,
    `.tool_calls` holds the model's choice (or `.text` its direct answer)."""
    spec = resolve_chat_model(model)
    request = _request(spec, messages, tools, schema, options)
    provider = providers.chat_provider(spec.provider)
    if stream:
        return _chat_stream(provider, spec, request, operation)
    budget = None
    if current_context().priority == BACKGROUND and yielding_enabled():
        budget = YieldBudget()

        def interrupt() -> None:
            if budget.should_stop():
                raise LLMPreempted("a learner's turn started; this background generation steps aside")

        request.interrupt = interrupt

    def run(attempt: _Attempt) -> ChatResult:
        result = provider.chat(request)
        result.call_id = attempt.record.call_id
        result.duration_s = attempt.elapsed()
        result.provider = result.provider or spec.provider
        result.request_model = result.request_model or spec.model
        attempt.end_ok(result=result)
        return result

    return _with_retries(operation=operation, provider=spec.provider, model=spec.model,
                         prompt=request.messages, run=run, budget=budget)


def _chat_stream(provider, spec: ModelSpec, request: ChatRequest, operation: str) -> ChatStream:
    # Attribution is captured now: the stream may be iterated elsewhere (an SSE response).
    ctx = current_context()
    stream = ChatStream(iter(()))

    def tokens() -> Iterator[str]:
        circuit = breaker(spec.provider)
        retries = int(llm_setting("BLOOM_LLM_RETRIES", 2))
        attempt_no = 0
        while True:
            attempt = _Attempt(operation=operation, provider=spec.provider, model=spec.model, ctx=ctx,
                               prompt=request.messages, attempt=attempt_no)
            stream.call_id = attempt.record.call_id
            try:
                circuit.before_call()
            except LLMOverloaded as exc:
                attempt.record.extra["circuit_open"] = True
                attempt.end_error(exc)
                raise
            yielded = False
            events = provider.stream(request)
            try:
                for event in events:
                    if isinstance(event, Token):
                        attempt.first_token()
                        yielded = True
                        yield event.text
                    elif isinstance(event, Done):
                        result = event.result
                        result.call_id = attempt.record.call_id
                        result.duration_s = attempt.elapsed()
                        result.time_to_first_token_s = attempt.record.time_to_first_token_s or \
                            result.time_to_first_token_s
                        attempt.end_ok(result=result)
                        stream.result = result
                circuit.success()
                if stream.result is None:
                    raise LLMInvalidOutput(f"{spec.provider} stream ended without a result")
                return
            except GeneratorExit:
                attempt.end_cancelled()
                raise
            except LLMError as exc:
                attempt.end_error(exc)
                if not exc.transient:
                    circuit.success()
                    raise
                circuit.failure()
                # Tokens already reached the reader: a retry would repeat them, so fail instead.
                if yielded or attempt_no >= retries:
                    raise
                time.sleep(backoff_delay(attempt_no, exc.retry_after))
                attempt_no += 1
            except BaseException as exc:
                attempt.end_error(exc)
                raise
            finally:
                close = getattr(events, "close", None)
                if close:
                    close()

    stream._tokens = tokens()
    return stream


# --- embeddings ---------------------------------------------------------------------------------
def resolve_embedding_model() -> ModelSpec:
    spec = llm_setting("BLOOM_EMBEDDINGS", None)
    if spec is None:
        return ModelSpec(provider="minilm", model="all-MiniLM-L6-v2")
    if spec.provider not in EMBEDDING_PROVIDERS:  # pragma: no cover - settings validate this
        raise ValueError(f"unknown embeddings provider {spec.provider!r}")
    return spec


def embed(texts: list[str], *, query: bool = False) -> list[list[float]]:
    """Batched embeddings, one vector per text (384-d, unit length with MiniLM). `query=True` for
    search queries only: their vectors may come from a faster approximate graph, so they must
    never be stored or compared with a threshold meant for stored vectors."""
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise ValueError("texts must be a list of strings")
    if not texts:
        return []
    spec = resolve_embedding_model()
    provider = providers.embedding_provider(spec.provider)
    timeout = float(llm_setting("BLOOM_LLM_TIMEOUT", 120.0))

    def run(attempt: _Attempt) -> list[list[float]]:
        vectors, tokens = provider.embed(spec.model, texts, timeout=timeout, query=query)
        if len(vectors) != len(texts):
            raise LLMInvalidOutput(f"{spec.provider} returned {len(vectors)} vectors for {len(texts)} texts")
        dims = {len(v) for v in vectors}
        if len(dims) != 1:
            raise LLMInvalidOutput(f"{spec.provider} returned vectors of mixed sizes {sorted(dims)}")
        if not all(math.isfinite(x) for v in vectors for x in v):
            raise LLMInvalidOutput(f"{spec.provider} returned NaN or infinite values")
        attempt.record.response_model = spec.model
        attempt.record.input_tokens = tokens
        attempt.record.extra.update({"n_texts": len(texts), "dim": dims.pop()})
        if query:
            attempt.record.extra["query"] = True
        attempt.end_ok(response=f"{len(vectors)} vectors")
        return vectors

    return _with_retries(operation="embeddings", provider=spec.provider, model=spec.model, prompt=texts, run=run)


# --- entities -----------------------------------------------------------------------------------
def entities(text: str, labels: list[str], *, threshold: float | None = None) -> list[EntitySpan]:
    """Entity spans of `text`; every span satisfies `text[span.start:span.end] == span.text`.
    `threshold=None` uses the one chosen when the model was built (on a validation split), else 0.5."""
    if not isinstance(text, str):
        raise ValueError("text must be a string")
    return entities_many([text], labels, threshold=threshold)[0]


def entities_many(texts: list[str], labels: list[str], *, threshold: float | None = None) -> list[list[EntitySpan]]:
    """`entities` for many texts in one batched model call (one telemetry row), in input order.
    Blank texts get no spans and are not sent."""
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise ValueError("texts must be a list of strings")
    if not isinstance(labels, list | tuple) or not labels or not all(isinstance(x, str) and x for x in labels):
        raise ValueError("labels must be a non-empty list of strings")
    if threshold is not None and not 0.0 <= float(threshold) <= 1.0:
        raise ValueError("threshold must be between 0 and 1")
    sent = [i for i, t in enumerate(texts) if t.strip()]
    out: list[list[EntitySpan]] = [[] for _ in texts]
    if not sent:
        return out
    model = str(llm_setting("BLOOM_ENTITY_MODEL", "local"))
    provider = providers.entity_provider()
    batch = [texts[i] for i in sent]

    def run(attempt: _Attempt) -> list[list[EntitySpan]]:
        found = provider.predict_many(model, batch, list(labels), threshold)
        if len(found) != len(batch):
            raise LLMInvalidOutput(f"gliner returned {len(found)} results for {len(batch)} texts")
        attempt.record.response_model = model
        attempt.record.extra.update({"n_spans": sum(len(s) for s, _ in found),
                                     "dropped_spans": sum(d for _, d in found)})
        if len(batch) > 1:
            attempt.record.extra["n_texts"] = len(batch)
        shown = [[{"text": s.text, "label": s.label, "start": s.start} for s in spans] for spans, _ in found]
        attempt.end_ok(response=shown if len(batch) > 1 else shown[0])
        return [spans for spans, _ in found]

    prompt = batch if len(batch) > 1 else batch[0]  # one text is recorded as before: the text itself
    for i, spans in zip(sent, _with_retries(operation="entities", provider="gliner", model=model, prompt=prompt,
                                            run=run), strict=True):
        out[i] = spans
    return out


def entity_model_ready() -> bool:
    """Is the configured entity model on disk? `make run` trains the local one in the background
    after the server is up (core.model_prep); until then entity extraction waits instead of failing."""
    from core.llm.providers.gliner import model_dir

    return model_dir(str(llm_setting("BLOOM_ENTITY_MODEL", "local"))).is_dir()


# --- health -------------------------------------------------------------------------------------
def health() -> dict[str, tuple[bool, str]]:
    """Each part: (ok, reason). Loads local models (once) to prove they work."""
    out: dict[str, tuple[bool, str]] = {}
    checks = {
        "llm": lambda: (lambda s: providers.chat_provider(s.provider).health(s.model))(resolve_chat_model(None)),
        "embeddings": lambda: (lambda s: providers.embedding_provider(s.provider).health(s.model))(
            resolve_embedding_model()),
        "entities": lambda: providers.entity_provider().health(str(llm_setting("BLOOM_ENTITY_MODEL", "local"))),
    }
    for part, check in checks.items():
        try:
            out[part] = check()
        except Exception as exc:  # a health check reports, it never raises
            out[part] = (False, f"{type(exc).__name__}: {exc}")
    return out
