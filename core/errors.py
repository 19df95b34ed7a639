"""The API's one error type and one error shape.

- `ApplicationError` is the one exception every service, selector and view raises for a request
  that cannot be carried out (code, message, field, HTTP status).
- `api_exception_handler` (REST_FRAMEWORK["EXCEPTION_HANDLER"]) renders it, DRF's own exceptions
  and Django's 404/403 as `{"error": {"code", "message", "field", "errors": [...]}}`: `errors`
  lists every validation error, and the first one is repeated at the top for clients that read
  only `code`/`message`/`field`.
- `ApiErrorShapeMiddleware` gives the same shape to the responses DRF never sees: Django's own 404
  (no URL matched), 405/403 raised before a view, CSRF failures, uncaught exceptions (500) and
  request bodies over the size limit (413), for paths under `/api/` only (the admin and the chat
  page keep Django's HTML pages). It never touches a JSON or streaming response: a JSON error
  that does not have the shape is a bug in that view, and the reliability suite reports it."""

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


class ApplicationError(Exception):
    """A request that cannot be carried out, with a stable machine-readable `code`, the input
    `field` at fault (if any) and the HTTP `status` the API answers with."""

    def __init__(self, message: str, *, code: str = "invalid", field: str | None = None, status: int = 400):
        super().__init__(message)
        self.message, self.code, self.field, self.status = message, code, field, status


def error_payload(code: str, message: str, field: str | None = None,
                  errors: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The body of every API error. Every app builds its errors through this (or the helpers
    below), so the shape is defined once."""
    first = {"code": code, "message": message, "field": field}
    return {"error": {**first, "errors": errors if errors else [first]}}


def error_response(code: str, message: str, *, field: str | None = None, status_code: int = 400,
                   headers: dict | None = None) -> Response:
    """A DRF response with the error shape (views and DRF exception handlers)."""
    return Response(error_payload(code, message, field), status=status_code, headers=headers)


def _validation_errors(detail: Any, prefix: str | None = None) -> list[dict[str, Any]]:
    """Every error in a DRF validation detail, flattened to `{code, message, field}` in input order
    (`field` is dotted for nested input: `facts.0.embedding.3`, the first fact's fourth number)."""
    if isinstance(detail, dict):
        out: list[dict[str, Any]] = []
        for key, value in detail.items():
            name = None if key in ("non_field_errors", "detail") else str(key)
            out += _validation_errors(value, f"{prefix}.{name}" if prefix and name else name or prefix)
        return out
    if isinstance(detail, list):
        out = []
        for index, item in enumerate(detail):
            # a list of objects reports one entry per item (empty for the valid ones): name the item
            nested = isinstance(item, dict | list)
            out += _validation_errors(item, f"{prefix}.{index}" if nested and prefix else prefix)
        return out
    return [{"code": getattr(detail, "code", "invalid") or "invalid", "message": str(detail), "field": prefix}]


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """The one DRF exception handler (REST_FRAMEWORK["EXCEPTION_HANDLER"])."""
    from django.core.exceptions import PermissionDenied
    from django.http import Http404
    from rest_framework import exceptions
    from rest_framework.views import exception_handler as drf_handler

    if isinstance(exc, ApplicationError):
        return error_response(exc.code, exc.message, field=exc.field, status_code=exc.status)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or "Not found.")
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    response = drf_handler(exc, context)
    if response is None:
        return None  # unexpected: a 500 (logged by Django, shaped by the middleware)
    if isinstance(exc, exceptions.ValidationError):
        errors = _validation_errors(exc.detail) or [{"code": "invalid", "message": "Invalid input.", "field": None}]
        first = errors[0]
        response.data = error_payload(first["code"], first["message"], first["field"], errors)
        return response
    detail = getattr(exc, "detail", None)
    message = str(detail if detail is not None else exc)
    code = getattr(detail, "code", None) or getattr(exc, "default_code", "error")
    if response.status_code == 404:
        code = "not_found"
    response.data = error_payload(code, message)
    return response


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
