"""Research settings are parsed at start-up: a bad value stops `manage.py` with one line naming
the variable, and the accessors read django.conf.settings (so an override applies at once)."""

from __future__ import annotations

import pytest
from django.test import override_settings

from bloom.tests._subprocess import run_manage
from coaching.research import conf, services


@pytest.mark.parametrize(
    ("env", "variable", "detail"),
    [
        ({"BLOOM_MISSED_GRACE_MINUTES": "two hours"}, "BLOOM_MISSED_GRACE_MINUTES", "not an integer"),
        ({"BLOOM_REMINDER_WINDOW_MINUTES": "0"}, "BLOOM_REMINDER_WINDOW_MINUTES", "must be >= 1"),
        ({"BLOOM_REMINDER_HOOK": "email"}, "BLOOM_REMINDER_HOOK", "not an http(s) URL"),
    ],
)
def test_bad_research_setting_stops_start_up_with_one_line(env, variable, detail):
    result = run_manage("check", env=env)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and lines[0].startswith("bloom: configuration error: ")
    assert variable in lines[0] and detail in lines[0]


def test_defaults_and_overrides_come_from_settings():
    assert (conf.missed_grace_minutes(), conf.reminder_window_minutes(), conf.reminder_hook()) == (120, 120, "none")
    assert services.reminder_channel() == "in_app"
    with override_settings(BLOOM_MISSED_GRACE_MINUTES=5, BLOOM_REMINDER_HOOK="https://hooks.example/bloom"):
        assert conf.missed_grace_minutes() == 5
        assert services.reminder_channel() == "webhook"
