"""Django's ASGI handler with the middleware chain and the view run synchronously, in one thread hop.

Every view here is synchronous and so is most middleware (Django's own, via MiddlewareMixin).
Django's stock ASGIHandler builds an async chain: each MiddlewareMixin hands its process_request
and process_response to a thread with sync_to_async, so one request crossed between the event loop
and a thread 15 times for /healthz (counted in bloom/tests/test_asgi_handler.py). Measured
in-process (memory/README.md, "The HTTP path"), that cost a trivial authenticated GET ~2-3 ms of
its ~12 ms. Here the chain is built in sync mode (as under WSGI) and the event loop hands a
request to it once; ASGI stays for what needs it: reading the body, detecting a client that went
away, and streaming async iterators (the chat stream, the research export), which Django's
send_response still iterates on the event loop.

The thread is also kept from one request to the next. Django's handler opens a ThreadSensitiveContext
per request, in which asgiref creates an executor with a new thread, and on exit starts another
thread to join it: two threads started per request, ~7 % of a uvicorn worker's CPU on the learner
search (py-spy, memory/README.md "The HTTP path, seventh round"). Here a request borrows an idle
single-thread executor and gives it back when its response is sent; its sync work still runs on
one thread, which no other request uses meanwhile. Django expects threads to be reused (threaded
WSGI servers do): the request_finished signal gives the database connection back to the pool.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.core.handlers.asgi import ASGIHandler
from django.http import HttpRequest, HttpResponseBase

# Idle executors kept beyond this many (after a burst of concurrent requests) are shut down.
IDLE_THREADS_KEPT = 64


class OneHopASGIHandler(ASGIHandler):
    def __init__(self) -> None:
        super().__init__()
        self._idle: list[ThreadPoolExecutor] = []  # list.pop/append: atomic, the loop needs no lock

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":  # as Django's handler: HTTP only
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        try:
            executor = self._idle.pop()
        except IndexError:
            executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bloom-request")
        try:
            async with ThreadSensitiveContext(executor=executor):
                await self.handle(scope, receive, send)
        except BaseException:
            # Cancelled or failed: the thread may still be running this request's sync code. It
            # finishes that and exits; the next request gets another thread.
            executor.shutdown(wait=False)
            raise
        if len(self._idle) < IDLE_THREADS_KEPT:
            self._idle.append(executor)
        else:
            executor.shutdown(wait=False)

    def load_middleware(self, is_async: bool = False) -> None:
        # Ignore the ASGI default (is_async=True): a sync chain, as BaseHandler.get_response uses.
        super().load_middleware(is_async=False)

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        # thread_sensitive: the same thread as the request's other sync calls (the
        # request_started/finished signals, response.close), so its database connection is the one
        # the request_finished signal closes.
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)
