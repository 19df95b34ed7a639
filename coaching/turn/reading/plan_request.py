"""What a request to plan says about when: read by rules, before any option is computed.

"let's plan around my night shifts next week" must not get the same options as "plan my week":
options from the profile alone ignore what the learner just said. Here code reads the days
("weekends only", "not on Fridays", "Tuesdays and Thursdays"), a time of day to study ("evenings",
"at 7pm") and a time that is taken ("night shifts", "I work mornings", "not mornings"). What it
cannot place ("around my shifts": which days?) is kept as `unplaced`, so the coach says it did not
use it instead of seeming to.

Pure functions: no database, no model (the model never decides when a session is)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from coaching.onboarding.values import TIME_RULES, keyword_matches, session_minutes
from coaching.turn.reading.vocabulary import (
    COMPARED_BEFORE,
    DAY_LIST_JOIN,
    WEEKDAYS,
    in_a_list,
    normalise,
    weekdays_named,
)

_DAY_GROUP = re.compile(r"\b(weekends?|weekdays?|work\s?days?)\b")
# Words ruling out what follows them ("not on Fridays", "I'm busy on Tuesday", "no mornings"),
# read in the 24 characters before a day or a time of day.
_RULED_OUT = (r"not|no|except|but not|never|apart from|other than|without|can't do|cannot do|can't on|can't|busy|"
              r"any day but|anything but")
_BEFORE_IT = r"\s+(?:on\s+|in\s+the\s+|the\s+|at\s+)?$"
# A day that is taken: "I work late on weekdays" ("weekends only, I work late on weekdays" is not
# every day). "after work on Mondays" is a time on Monday, not Monday taken.
_DAY_TAKEN = re.compile(rf"(?:\b(?:{_RULED_OUT})|(?<!after )(?<!before )\b(?:i work|working|work|i have work|shifts?)"
                        rf"(?: late| long hours| all day| nights?| evenings?)?){_BEFORE_IT}")
# What is said of a day or a time of day that rules it out, after it: "weekends are impossible",
# "evenings are busy", "weekdays are dead", "mondays don't work".
_RULED_OUT_AFTER = (r"(?:are|is|r)\s+(?:(?:just|totally|completely|basically|pretty much|always|usually|a bit)\s+)?"
                    r"(?:busy|taken|out|full|impossible|dead|booked|packed|hectic|no good|not possible|a no(?:-go)?|"
                    r"off(?: limits)?|a write-?off)|(?:don'?t|doesn'?t|won'?t|never|can'?t|cannot) work")
_DAY_RULED_OUT_AFTER = re.compile(rf"^\s*(?:{_RULED_OUT_AFTER})\b")
# A time of day that is taken: "night shifts", "I work evenings", "evenings are busy".
_BUSY_AFTER = re.compile(rf"^\s*(?:shifts?|work|job|classes|class|{_RULED_OUT_AFTER}|i work)\b")
_BUSY_BEFORE = re.compile(rf"\b(?:{_RULED_OUT}|i work|working|work){_BEFORE_IT}")
_CLOCK = re.compile(r"\bat (\d{1,2})(?::(\d{2}))?\s*(am|pm)?\b")
_AROUND = re.compile(r"\b(?:around|round|between|after|before) (?:my|the|our) ([a-z' -]{2,40}?)(?=[,.;!?]|$| and\b|"
                     r" next\b| this\b| please\b)")


@dataclass(frozen=True)
class PlanRequest:
    days: frozenset[int] | None = None  # weekdays allowed (0 = Monday); None: any day
    best_time: str | None = None  # a time of day to study in (coaching.models.BestTime)
    hour: int | None = None  # an hour named ("at 7pm")
    minute: int = 0  # its minutes ("at 5:45am")
    busy_time: str | None = None  # a time of day that is taken
    unplaced: str = ""  # a constraint named but not placed ("my shifts")
    session_minutes: int | None = None  # a sitting's length ("20 minutes a day"; values.session_minutes)
    # The days were said as the only ones that work ("weekends only", "not on Mondays"), not just as
    # where the new sessions go ("a 30 minute practice on Friday"): only then is a session planned
    # on another day one "on a day you said doesn't work".
    days_ruled_out: bool = False

    def said(self) -> list[str]:
        """What code read, in words for the reply ("weekends only", "not at night")."""
        parts = []
        if self.days is not None:
            parts.append(days_phrase(self.days, only=self.days_ruled_out))
        if self.hour is not None:
            parts.append(f"at {self.hour:02d}:{self.minute:02d}")
        elif self.best_time:
            parts.append(f"in the {self.best_time}" if self.best_time != "night" else "at night")
        if self.busy_time:
            parts.append(f"not {'at night' if self.busy_time == 'night' else 'in the ' + self.busy_time}")
        if self.session_minutes:
            parts.append(f"{self.session_minutes} min at a time")
        return parts


def days_phrase(days: frozenset[int], *, only: bool) -> str:
    """The days in words; "only" where the learner ruled the others out ("weekends only"), not where
    they said where they mostly are ("weekends mostly" → "on weekends")."""
    if days == frozenset({5, 6}):
        return "weekends only" if only else "on weekends"
    if days == frozenset(range(5)):
        return "weekdays only" if only else "on weekdays"
    if len(days) >= 4 and only:
        return "not on " + " or ".join(WEEKDAYS[d].title() + "s" for d in sorted(set(range(7)) - days))
    return "on " + " and ".join(WEEKDAYS[d].title() + "s" for d in sorted(days))


def _days_in(norm: str) -> list[tuple[int, int, frozenset[int]]]:
    """Each day or group of days named, in order: (start, end, the days). Weekdays as
    `vocabulary.weekdays_named` reads them (a slip of one letter included), short forms only in a list."""
    found = [(m.start(), m.end(), frozenset({5, 6}) if m.group(1).startswith("weekend") else frozenset(range(5)))
             for m in _DAY_GROUP.finditer(norm)]
    named = weekdays_named(norm, in_lists=True)
    # Full names, or short forms in a list of days ("mon, wed and fri"): a short form alone may be a
    # word of another language ("mon" is French).
    found += [(m.start(), m.end(), frozenset({day})) for day, m in named
              if len(m.group(0)) >= 6 or in_a_list(m, [other for _, other in named])]
    return sorted(found)


# Words that make the days named the only ones ("weekends only", "just Tuesdays", "any day except Friday");
# "just" only right before the days ("can you just add one on Friday" rules nothing out).
_ONLY = re.compile(r"\b(?:only|except|apart from|other than)\b|\bjust\s+(?:on\s+|the\s+)*(?:weekends?|weekdays?|"
                   r"[a-z]+days?)\b")


def read_plan_request(text: str) -> PlanRequest:
    norm = normalise(text)
    allowed: set[int] = set()
    excluded: set[int] = set()
    # Days in a list go together: "not on Mondays or Fridays", "I work Mondays and Fridays", "sat
    # and sun are impossible".
    lists: list[list[tuple[int, int, frozenset[int]]]] = []
    for start, end, named in _days_in(norm):
        if COMPARED_BEFORE.search(norm[max(0, start - 32):start]):
            continue  # "more on weekends": not the days the learner keeps
        last = lists[-1][-1] if lists else None
        joined = norm[last[1]:start] if last else ""
        # "weekends, weekdays are dead": a comma after or before a group of days ends a clause.
        group = _DAY_GROUP.fullmatch(norm[start:end]) or (last and _DAY_GROUP.fullmatch(norm[last[0]:last[1]]))
        if last and DAY_LIST_JOIN.fullmatch(joined) and not (group and joined.strip() == ","):
            lists[-1].append((start, end, named))
        else:
            lists.append([(start, end, named)])
    for days_listed in lists:
        start, end = days_listed[0][0], days_listed[-1][1]
        taken = _DAY_TAKEN.search(norm[max(0, start - 24):start]) or _DAY_RULED_OUT_AFTER.match(norm[end:])
        for _, _, named in days_listed:
            (excluded if taken else allowed).update(named)
    days: frozenset[int] | None = None
    if allowed or excluded:
        days = frozenset((allowed or set(range(7))) - excluded) or None
    ruled_out = days is not None and bool(excluded or _ONLY.search(norm))

    best_time = busy_time = None
    for value, keywords in TIME_RULES:
        if value == "flexible":
            continue
        for keyword in keywords:
            for match in keyword_matches(norm, keyword):
                if keyword in ("before work", "after work", "tonight"):
                    busy = False
                else:
                    busy = bool(_BUSY_AFTER.match(norm[match.end():])
                                or _BUSY_BEFORE.search(norm[max(0, match.start() - 24):match.start()]))
                if busy:
                    busy_time = busy_time or value
                else:
                    best_time = best_time or value

    hour, minute = None, 0
    if clock := _CLOCK.search(norm):
        hour = int(clock.group(1)) % 24
        minute = int(clock.group(2) or 0) % 60
        if clock.group(3) == "pm" and hour < 12:
            hour += 12
        if clock.group(3) is None and hour < 7:  # "at 6" for a study session is the evening
            hour += 12
    unplaced = ""
    if around := _AROUND.search(norm):
        thing = around.group(1).strip()
        # "around my night shifts" placed a busy time, but not the days of the shifts.
        if busy_time is None or days is None:
            unplaced = thing
    if best_time == busy_time:
        best_time = None
    return PlanRequest(days=days, best_time=best_time, hour=hour, minute=minute, busy_time=busy_time, unplaced=unplaced,
                       session_minutes=session_minutes(text), days_ruled_out=ruled_out)


def with_earlier(request: PlanRequest, earlier: list[str]) -> PlanRequest:
    """`request` with the days and the taken time, and the length of a session, the learner gave in
    an earlier message (most recent first) when it names none: "weekends only, I work late on
    weekdays" said at the onboarding's time question, then "let's plan my week", must not get
    Saturday, Monday and Wednesday. The reply says what was used ("Going by what you said: weekends
    only")."""
    when_known = request.days is not None and request.busy_time is not None
    for text in earlier:
        if when_known and request.session_minutes:
            break
        said = read_plan_request(text)
        if not when_known and (said.days is not None or said.busy_time):  # the latest message that said when
            earlier_days = request.days is None
            request = replace(request, days=said.days if earlier_days else request.days,
                              days_ruled_out=said.days_ruled_out if earlier_days else request.days_ruled_out,
                              busy_time=request.busy_time or said.busy_time)
            when_known = True
        if request.session_minutes is None and said.session_minutes:
            request = replace(request, session_minutes=said.session_minutes)
    return request

