"""The log of every adherence export: who, how, which format and schema, how many rows."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from coaching.research import conf
from coaching.research.models import ExportLog, Study


def export_log_start(*, study: Study, user: AbstractBaseUser | None, via: str, fmt: str) -> ExportLog:
    return ExportLog.objects.create(
        study=study, user=user if (user is not None and user.is_authenticated) else None, via=via, format=fmt,
        schema_version=str(conf.EXPORT_SCHEMA_VERSION),
    )


def export_log_finish(*, log_id: int, row_count: int) -> None:
    ExportLog.objects.filter(pk=log_id).update(row_count=row_count, finished_at=timezone.now())
