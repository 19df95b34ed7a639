"""Server-sent events for a chat turn, shared by the API and the chat page.

The turn (sync ORM + sync model calls) runs in a worker thread and pushes events into a
thread-safe queue. Under ASGI the response body is an ASYNC generator reading that queue, because
Django buffers sync iterators of StreamingHttpResponse under ASGI (no token would reach the client
before the end). Under WSGI (tests, gunicorn) a sync generator reads the same queue.

The view waits for the FIRST event before choosing the status: if the model is down before any
token, the client gets a plain 503 JSON error instead of a 200 stream carrying an error."""

from __future__ import annotations

import asyncio
import json
import queue
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

from django.core.handlers.asgi import ASGIRequest
from django.db import close_old_connections, connection
from django.http import StreamingHttpResponse

from coaching.models import Message
from coaching.services import message_mark_unanswered
from coaching.turn import ModelDown, turn_run

_END = object()


def sse(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def final_payload(result) -> dict[str, Any]:
    """The stored reply, named by public ids only (a client never sees a message's integer key)."""
    reply = result.reply
    learner_message = reply.reply_to  # the locked learner message persist() stored it with
    return {"message_id": str(reply.public_id), "content": reply.content, "specialist": reply.specialist,
            "trace_id": reply.trace_id, "reply_to": str(learner_message.public_id) if learner_message else None,
            "replaced": result.replaced}


class TurnStream:
    """Runs `turn_run` in a thread; events are (kind, payload) tuples on `self.events`."""

    def __init__(self, message: Message):
        self.message_id = message.pk  # the worker thread re-fetches by the key
        self.public_id = str(message.public_id)  # what the frames name
        self.events: queue.Queue = queue.Queue()
        self.thread = threading.Thread(target=self._work, name=f"turn-{message.pk}", daemon=True)

    def start(self) -> TurnStream:
        self.thread.start()
        return self

    def _work(self) -> None:
        close_old_connections()
        try:
            message = Message.objects.select_related("conversation__learner").get(pk=self.message_id)
            result = turn_run(message=message, emit=lambda text: self.events.put(("token", {"text": text})))
            self.events.put(("final", final_payload(result)))
        except ModelDown as exc:
            self.events.put(("unavailable", {"message": str(exc), "retry_after": exc.retry_after,
                                             "message_id": self.public_id}))
        except Exception as exc:  # never leave the reader hanging; the message is kept
            message_mark_unanswered(message=Message(pk=self.message_id))
            self.events.put(("error", {"message": f"turn failed: {type(exc).__name__}", "message_id": self.public_id}))
            raise
        finally:
            self.events.put((_END, None))
            connection.close()

    def first(self, timeout: float = 300.0) -> tuple[Any, Any]:
        return self.events.get(timeout=timeout)

    def frames(self, first: tuple[Any, Any]) -> Iterator[str]:
        item = first
        while item[0] is not _END:
            yield sse(item[0], item[1])
            item = self.events.get()

    async def aframes(self, first: tuple[Any, Any]) -> AsyncIterator[str]:
        item = first
        while item[0] is not _END:
            yield sse(item[0], item[1])
            item = await asyncio.to_thread(self.events.get)


def streaming_response(request, stream: TurnStream, first: tuple[Any, Any]) -> StreamingHttpResponse:
    raw = getattr(request, "_request", request)
    body = stream.aframes(first) if isinstance(raw, ASGIRequest) else stream.frames(first)
    response = StreamingHttpResponse(body, content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx: do not buffer the stream
    return response
