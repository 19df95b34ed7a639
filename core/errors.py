"""The API's one error shape, `{"error": {"code", "message", "field"}}`, for the responses DRF
never sees: Django's own 404 (no URL matched), 405/403 raised before a view, CSRF failures,
uncaught exceptions (500), and request bodies over the size limit (413).

DRF views render their errors through `coaching.api.errors.exception_handler`; this middleware
is the safety net underneath, for paths under `/api/` only (the admin and the chat page keep
Django's HTML pages). It never touches a JSON or streaming response: a JSON error that does not
have the shape is a bug in that view, and the reliability test suite reports it."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.http import JsonResponse
from rest_framework.response import Response

logger = logging.getLogger("bloom.api")

API_PREFIX = "/api/"
CODES = {
    400: "bad_request", 401: "not_authenticated", 403: "forbidden", 404: "not_found",
    405: "method_not_allowed", 406: "not_acceptable", 413: "too_large", 415: "unsupported_media_type",
    429: "throttled", 500: "server_error", 502: "bad_gateway", 503: "unavailable",
}
MESSAGES = {
    400: "Bad request.", 403: "Forbidden.", 404: "Not found.", 405: "Method not allowed.",
    500: "Internal server error; the request was not completed.",
}
# Headers worth keeping when an HTML error page is replaced by the JSON shape.
KEEP_HEADERS = ("Allow", "Retry-After", "WWW-Authenticate", "Vary")


def error_payload(code: str, message: str, field: str | None = None) -> dict[str, Any]:
    """The body of every API error. Every app builds its errors through this (or the two helpers
    below), so the shape is defined once."""
    return {"error": {"code": code, "message": message, "field": field}}


def error_response(code: str, message: str, *, field: str | None = None, status_code: int = 400,
                   headers: dict | None = None) -> Response:
    """A DRF response with the error shape (views and DRF exception handlers)."""
    return Response(error_payload(code, message, field), status=status_code, headers=headers)


def error_json(status: int, *, code: str | None = None, message: str | None = None,
               field: str | None = None) -> JsonResponse:
    """A plain Django response with the error shape (middleware, outside DRF)."""
    return JsonResponse(error_payload(code or CODES.get(status, "error"),
                                      message or MESSAGES.get(status, f"HTTP {status}."), field), status=status)


def _content_length(request) -> int | None:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return None


class ApiErrorShapeMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not request.path.startswith(API_PREFIX):
            return self.get_response(request)
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        length = _content_length(request)
        if length is None:
            return error_json(400, code="invalid", message="Content-Length is not a number.")
        # Refused before anything reads the body: DRF's JSON parser reads the raw stream, which
        # Django's DATA_UPLOAD_MAX_MEMORY_SIZE check (on request.body / forms) does not cover.
        if limit is not None and length > limit:
            return error_json(413, message=f"The request body is {length} bytes; the limit is {limit} bytes "
                                           "(BLOOM_MAX_BODY_BYTES).")
        response = self.get_response(request)
        if response.status_code < 400 or getattr(response, "streaming", False):
            return response
        if "json" in (response.get("Content-Type") or ""):
            return response
        shaped = error_json(response.status_code, message=_reason(response))
        for header in KEEP_HEADERS:
            if response.has_header(header):
                shaped[header] = response[header]
        return shaped

    def process_exception(self, request, exception):
        if not request.path.startswith(API_PREFIX):
            return None
        from django.core.exceptions import BadRequest, PermissionDenied, RequestDataTooBig, SuspiciousOperation
        from django.http import Http404

        if isinstance(exception, RequestDataTooBig):
            return error_json(413, message=f"The request body is over the limit of "
                                           f"{settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes (BLOOM_MAX_BODY_BYTES).")
        if isinstance(exception, Http404 | PermissionDenied | BadRequest | SuspiciousOperation):
            return None  # Django turns these into 404/403/400; __call__ gives them the shape
        # Logged here because returning a response skips Django's own 500 logging.
        logger.exception("unhandled error on %s %s", request.method, request.path)
        return error_json(500)


def _reason(response) -> str | None:
    if response.status_code == 403 and b"CSRF" in (getattr(response, "content", b"") or b""):
        return "CSRF verification failed: session-authenticated requests need the CSRF token."
    return None
