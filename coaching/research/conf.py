"""Research tunables. The ones a deployment may change are settings, parsed once with the others
in bloom/settings.py (a bad value stops start-up) and documented in the README's configuration
table; the accessors below read them from django.conf.settings on every call, so a changed
setting (a test's override) applies at once. The rest are constants of the code."""

from __future__ import annotations

from django.conf import settings


def missed_grace_minutes() -> int:
    """A session is missed once planned_start + duration + this grace has passed with no report."""
    return settings.BLOOM_MISSED_GRACE_MINUTES


def reminder_hook() -> str:
    """`none` (in-app message only) or an http(s) webhook URL."""
    return settings.BLOOM_REMINDER_HOOK


def reminder_window_minutes() -> int:
    """A reminder is due from the learner's best time until this many minutes later; the beat
    interval must be shorter than this or a slot can be skipped."""
    return settings.BLOOM_REMINDER_WINDOW_MINUTES


# Local clock time of each `best_time` answer. Flexible learners get an early-evening prompt.
BEST_TIME_CLOCK: dict[str, tuple[int, int]] = {
    "morning": (8, 0),
    "midday": (12, 0),
    "afternoon": (15, 0),
    "evening": (19, 0),
    "night": (21, 0),
    "flexible": (18, 0),
    "": (18, 0),
}

# Bumped whenever a column is added, removed, renamed or changes meaning. An integer, so that every
# reader (pandas, pyarrow, R) parses it as the type the codebook gives: "1.0" used to read as a float.
# 2: baseline frozen at enrolment, due sessions only, skipped/missed/pending counts, study-level date
#    shift, study-specific participant ids, empty-cell missing values, true/false booleans.
# 3: the pre-registered primary outcome (intended_sessions, protocol_adherence, protocol_adherent),
#    completions by evidence source, frozen weeks (week_closed, late_corrections), cancelled and
#    replaced sessions, time-zone moves (timezone_at_export, sessions_other_plan_week), check-ins
#    once per session, a row for every randomised participant.
EXPORT_SCHEMA_VERSION = 3
ADHERENT_THRESHOLD = 0.8
# A study week closes this long after it ends (local Monday 00:00 of the next week, in the
# participant's enrolment time zone). From then on the export reads the week as it was at its
# close: later check-ins, calendar imports and status changes on its sessions are counted as
# `late_corrections`, never folded into it. Longer than the longest session (600 min) plus the
# missed grace, so every session of the week is due before its week closes.
WEEK_CLOSE_HOURS = 72
# Study-level date shift: a non-zero whole number of weeks (so week_start stays a Monday) in ± this.
DATE_SHIFT_MAX_WEEKS = 26
PSEUDONYM_HEX_CHARS = 16
# Participant ids start with a letter so no reader can ever infer the column as a number.
PSEUDONYM_PREFIX = "p"
