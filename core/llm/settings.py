"""Read Django settings when Django is configured, defaults otherwise (bench scripts, plain
Python). core.llm reads settings but imports no Django app."""

from __future__ import annotations

from typing import Any


def llm_setting(name: str, default: Any) -> Any:
    try:
        from django.conf import settings

        return getattr(settings, name, default)
    except Exception:  # ImproperlyConfigured outside Django
        return default
