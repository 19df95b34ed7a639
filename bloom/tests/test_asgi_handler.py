"""bloom.asgi serves requests through OneHopASGIHandler: the middleware chain and a sync view run
in one hand-over to a thread (not one per middleware hook), async iterators still stream chunk by
chunk, and a view's error still comes back as a response. Driven in-process over ASGI messages
(asgiref's ApplicationCommunicator), with a URLconf of this module for the view-shaped cases."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest
from asgiref import sync as asgiref_sync
from asgiref.testing import ApplicationCommunicator
from django.http import JsonResponse, StreamingHttpResponse
from django.test import override_settings
from django.urls import path

from bloom.asgi_handler import OneHopASGIHandler

pytestmark = pytest.mark.django_db(transaction=True)


def _threads(request):
    return JsonResponse({"view": threading.get_ident(), "middleware": request.seen_by_middleware,
                         "thread": threading.current_thread().name})


async def _chunks():
    for part in ("one,", "two,", "three"):
        yield part
        await asyncio.sleep(0.01)


def _stream(request):
    return StreamingHttpResponse(_chunks(), content_type="text/plain")


def _boom(request):
    raise RuntimeError("view failed")


_together = threading.Barrier(2)


def _meet(request):
    """Returns only once a second request is in this view at the same time (on another thread)."""
    _together.wait(timeout=10)
    return JsonResponse({"view": threading.get_ident()})


urlpatterns = [path("threads", _threads), path("stream", _stream), path("boom", _boom), path("meet", _meet)]


class RecordThread:
    """A plain sync middleware (MiddlewareMixin-style hooks): which thread ran its request hook."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.seen_by_middleware = threading.get_ident()
        return self.get_response(request)


def _scope(path_: str, headers=()) -> dict:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
            "path": path_, "raw_path": path_.encode(), "query_string": b"", "root_path": "",
            "headers": [(b"host", b"testserver"), *headers], "client": ("127.0.0.1", 5000),
            "server": ("testserver", 80)}


# Only a guard against a hang: /healthz loads the embedding and entity models on its first call,
# which took ~28 s on a loaded 2-core machine (a 30 s limit failed there).
_TIMEOUT = 180


async def _get(app, path_: str, headers=()) -> tuple[int, list[dict]]:
    comm = ApplicationCommunicator(app, _scope(path_, headers))
    await comm.send_input({"type": "http.request", "body": b"", "more_body": False})
    start = await comm.receive_output(timeout=_TIMEOUT)
    bodies = []
    while True:
        message = await comm.receive_output(timeout=_TIMEOUT)
        bodies.append(message)
        if not message.get("more_body"):
            break
    await comm.wait(timeout=_TIMEOUT)
    return start["status"], bodies


def _count_hops(monkeypatch) -> list[str]:
    """Every sync_to_async hand-over (one per call of an adapted function), by function name."""
    calls: list[str] = []
    original = asgiref_sync.SyncToAsync.__call__

    async def counting(self, *args, **kwargs):
        calls.append(getattr(self.func, "__qualname__", repr(self.func)))
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(asgiref_sync.SyncToAsync, "__call__", counting)
    return calls


def test_the_project_application_is_the_one_hop_handler_with_a_sync_chain():
    from bloom.asgi import application

    assert isinstance(application, OneHopASGIHandler)
    assert not asyncio.iscoroutinefunction(application._middleware_chain)


def test_a_real_api_request_hands_over_to_a_thread_a_fixed_few_times(monkeypatch, settings):
    """The project's whole middleware stack in front of a real endpoint (/healthz): the stock
    handler crossed to a thread for each middleware hook (15 times for /healthz with this stack); here the request
    is handed over once, plus Django's own signal and close calls around it."""
    from bloom.asgi import application

    hops = _count_hops(monkeypatch)
    status, bodies = asyncio.run(_get(application, "/healthz"))
    assert status in (200, 503), bodies  # 503: a component this test does not start is down
    assert hops.count("BaseHandler.get_response") == 1, hops
    assert len(hops) <= 4, hops


@override_settings(ROOT_URLCONF=__name__, MIDDLEWARE=[f"{__name__}.RecordThread"])
def test_middleware_and_view_run_in_the_same_thread_off_the_event_loop():
    app = OneHopASGIHandler()
    loop_thread = []

    async def run():
        loop_thread.append(threading.get_ident())
        return await _get(app, "/threads")

    status, bodies = asyncio.run(run())
    assert status == 200
    seen = json.loads(b"".join(m["body"] for m in bodies))
    assert seen["view"] == seen["middleware"] != loop_thread[0]


@override_settings(ROOT_URLCONF=__name__, MIDDLEWARE=[f"{__name__}.RecordThread"])
def test_an_async_iterator_still_streams_chunk_by_chunk():
    status, bodies = asyncio.run(_get(OneHopASGIHandler(), "/stream"))
    assert status == 200
    parts = [m["body"] for m in bodies if m.get("body")]
    assert parts == [b"one,", b"two,", b"three"], bodies  # not buffered into one body


@override_settings(ROOT_URLCONF=__name__, MIDDLEWARE=[f"{__name__}.RecordThread"], DEBUG=False)
def test_a_view_that_raises_becomes_a_500_response():
    status, _ = asyncio.run(_get(OneHopASGIHandler(), "/boom"))
    assert status == 500


@override_settings(ROOT_URLCONF=__name__, MIDDLEWARE=[f"{__name__}.RecordThread"])
def test_a_request_thread_is_kept_for_the_next_request_and_never_shared():
    """Django's handler started two threads per request; this one keeps a request's thread for the
    next request. Two requests at the same time still get a thread each: the view waits until the
    other request is in it too, which one shared thread could never reach (a broken barrier: 500)."""
    app = OneHopASGIHandler()

    async def run():
        first = await _get(app, "/threads")
        second = await _get(app, "/threads")
        together = await asyncio.gather(_get(app, "/meet"), _get(app, "/meet"))
        return first, second, together

    first, second, together = asyncio.run(run())
    ident = [json.loads(b"".join(m["body"] for m in bodies))["view"] for _, bodies in (first, second, *together)]
    assert [status for status, _ in (first, second, *together)] == [200] * 4
    # Kept for the next request: the same thread object, not only the same ident (the OS may give
    # a new thread a dead one's ident; a new executor's thread has a new name).
    names = [json.loads(b"".join(m["body"] for m in bodies))["thread"] for _, bodies in (first, second)]
    assert ident[0] == ident[1] and names[0] == names[1]
    assert ident[2] != ident[3]  # concurrent requests: a thread each
