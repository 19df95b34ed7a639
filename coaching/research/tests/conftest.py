from __future__ import annotations

import datetime as dt

import pytest


class Clock:
    """A settable "now" for code that reads django.utils.timezone.now() (services, auto_now_add
    fields), so a study can be built through the real services in its own past."""

    def __init__(self) -> None:
        self.now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)

    def set(self, moment: dt.datetime) -> dt.datetime:
        assert moment.tzinfo is not None
        self.now = moment
        return moment

    def __call__(self) -> dt.datetime:
        return self.now


@pytest.fixture
def clock(monkeypatch) -> Clock:
    from django.utils import timezone

    fake = Clock()
    monkeypatch.setattr(timezone, "now", fake)
    return fake
