"""The Bloom project, the top layer: settings, URLs, ASGI/WSGI, the Celery app, and the cross-app
orchestration that may touch every app (learner erasure, transcript retention). Shared pieces live
in `core` (bottom); the apps sit between (see docs/architecture.md)."""

from bloom.celery import app as celery_app

__all__ = ("celery_app",)
