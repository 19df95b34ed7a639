"""One error shape for the whole API: {"error": {"code", "message", "field"}}. Set as
REST_FRAMEWORK["EXCEPTION_HANDLER"]."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.views import exception_handler as drf_handler

from core.errors import error_payload, error_response
from coaching.services import ServiceError

__all__ = ["error_response", "exception_handler"]


def _first(detail) -> tuple[str | None, str, str]:
    """(field, message, code) of the first validation error in a DRF detail structure."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            field, message, code = _first(value)
            name = None if key in ("non_field_errors", "detail") else str(key)
            return (f"{name}.{field}" if name and field else name or field), message, code
    if isinstance(detail, list) and detail:
        return _first(detail[0])
    return None, str(detail), getattr(detail, "code", "invalid") or "invalid"


def exception_handler(exc, context):
    if isinstance(exc, ServiceError):
        return error_response(exc.code, str(exc), field=exc.field, status_code=exc.status)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or "Not found.")
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    response = drf_handler(exc, context)
    if response is None:
        return None  # unexpected: a 500 (logged by Django)
    if isinstance(exc, exceptions.ValidationError):
        field, message, code = _first(exc.detail)
    else:
        field, message = None, str(getattr(exc, "detail", exc))
        code = getattr(getattr(exc, "detail", None), "code", None) or getattr(exc, "default_code", "error")
    if response.status_code == status.HTTP_404_NOT_FOUND:
        code = "not_found"
    response.data = error_payload(code, message, field)
    return response
