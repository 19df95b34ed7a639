"""The one error shape: {"error": {"code", "message", "field"}}."""

from __future__ import annotations

from typing import Any

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from core.errors import error_payload, error_response
from coaching.research.services import ResearchError


def research_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ResearchError):
        return error_response(exc.code, exc.message, field=exc.field)
    response = exception_handler(exc, context)
    if response is None:
        return None
    detail = response.data.get("detail") if isinstance(response.data, dict) else None
    code = getattr(detail, "code", None) or ("error" if response.status_code >= 400 else "ok")
    message = str(detail) if detail is not None else str(response.data)
    response.data = error_payload(code, message)
    return response


class ErrorShapeMixin:
    def get_exception_handler(self):
        return research_exception_handler


__all__ = ["ErrorShapeMixin", "error_response", "research_exception_handler", "status"]
