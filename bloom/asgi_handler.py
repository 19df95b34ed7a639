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
"""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler
from django.http import HttpRequest, HttpResponseBase


class OneHopASGIHandler(ASGIHandler):
    def load_middleware(self, is_async: bool = False) -> None:
        # Ignore the ASGI default (is_async=True): a sync chain, as BaseHandler.get_response uses.
        super().load_middleware(is_async=False)

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        # thread_sensitive: the same thread as the request's other sync calls (the
        # request_started/finished signals, response.close), so its database connection is the one
        # the request_finished signal closes.
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)
