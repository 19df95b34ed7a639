"""The planner specialist: code offers the plan (or reschedule) options and, on "option B" /
"yes", schedules the one picked; the model's words may only frame them."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from django.utils import timezone

from coaching.models import PlannedSession
from coaching.selectors import progress_for, session_overlapping, sessions_upcoming
from coaching.services import learner_tz, plan_options, reschedule_options
from coaching.services.plans import _SLOT_HOUR
from coaching.turn import guard, prompts
from coaching.turn.dialogue import sessions_missed
from coaching.turn.phrasing import phrase, when
from coaching.turn.reading.plan_request import PlanRequest
from coaching.turn.reading.vocabulary import DAY_CODES, WEEKDAYS
from coaching.turn.router import PLANNER
from coaching.turn.state import Run


def _schedule_chosen(run, toolbox, chosen: dict) -> tuple[str, int]:
    """Code acts on the option it offered: one schedule_session call per slot (a make-up replaces
    the sessions it names, in one write), then says what it did. Returns the confirmation and how
    many sessions were scheduled."""
    if chosen.get("replaces"):
        result = toolbox.call("apply_makeup", {"option": chosen}, by="code")
        if "error" in result:
            return f"I couldn't put that in place: {result['error']}. Nothing was changed.", 0
        n, replaced = len(result["scheduled"]), len(result["replaces"])
        return (f"Moved: {n} of {len(chosen['sessions'])} sessions scheduled ({chosen['summary']}), in place of the "
                f"missed one{'s' if replaced != 1 else ''}. Say “undo” to take it back."), n
    for s in chosen["sessions"]:
        toolbox.call("schedule_session", {"start": s["start"], "minutes": s["minutes"], "topic": s["topic"]},
                     by="code")
    calls = [c for c in toolbox.calls if c["name"] == "schedule_session"]
    ok = sum(c["ok"] for c in calls)
    # A slot the learner already has a session in is refused by the service (session_overlap):
    # said as such, not as a failure, and never counted as scheduled.
    taken = sum(not c["ok"] and c["result"].get("code") == "session_overlap" for c in calls)
    total = len(chosen["sessions"])
    if not ok and taken == total:
        return f"Those times are already in your plan ({chosen['summary']}), so nothing new was scheduled.", 0
    verb = "Moved" if chosen.get("kind") == "reschedule" else f"Option {chosen['label']} is in your plan"
    also = f" {taken} of the times already had a session, so they were left as they were." if taken else ""
    return (f"{verb}: {ok} of {total} sessions scheduled ({chosen['summary']}).{also} "
            "Say “undo” to take it back."), ok


def planner_turn(run: Run) -> tuple[str, str]:
    rule, reading, previous = run.decision.rule, run.reading, run.previous
    if rule in ("option_answer", "move_choice") and previous is not None:
        return _option_answer(run, previous.offered_options)
    if rule == "plan_question":
        run.outcome = "templated"
        return "", _answer_from_plan(run)
    if rule == "cancel_request":
        run.outcome = "templated"
        return "", _cancel(run)
    if rule == "move_request" and (reading.has("session") or not sessions_missed(learner=run.learner)):
        run.outcome = "templated"
        # A move only a model's proposal read ("I work night shifts" as a move to the night) is asked about.
        return "", _move(run, reading.get("session"), _target(reading), confirm=reading.proposed)
    return _offer(run)


def _option_answer(run: Run, options: list[dict]) -> tuple[str, str]:
    """Code acts on the option the reading settled: "none" declines, no label asks which."""
    label = run.reading.get("option")
    run.outcome = "templated"
    if label == "none" and options and options[0].get("kind") in ("move", "cancel"):
        return "", "OK — nothing changed; your sessions stay as they are."
    if label == "none":
        return "", "Fine — I won't schedule any of those. Tell me what would suit you better (days, times or length)."
    chosen = next((o for o in options if o["label"] == label), None)
    if chosen is None:
        run.offered_options = options
        listing = " or ".join(f"{o['label']} ({o['summary']})" for o in options)
        verb = "move" if options and options[0].get("kind") == "move" else "schedule"
        return "", f"Which one shall I {verb} — {listing}?"
    if chosen.get("kind") == "move":
        return "", _move(run, str(chosen["session_id"]), chosen.get("target") or {})
    if chosen.get("kind") == "cancel":
        session = next((s for s in sessions_upcoming(learner=run.learner) if s.pk == chosen["session_id"]), None)
        return "", _cancel_session(run, session) if session else "That session is no longer in your plan."
    if run.reading.has("time") and chosen.get("sessions"):
        # "A but at 8pm instead": the option's sessions at the hour the learner named.
        hour, minute = (int(part) for part in run.reading.get("time").split(":"))
        at = f"at {hour:02d}:{minute:02d}"
        chosen = {**chosen, "summary": re.sub(r"\bat \d{2}:\d{2}(?=\)$)", at, chosen["summary"]), "sessions": [
            {**s, "start": datetime.fromisoformat(s["start"]).replace(hour=hour, minute=minute).isoformat()}
            for s in chosen["sessions"]]}
    if (run.reading.has("session_minutes") and chosen.get("sessions")
            and any(s["minutes"] != run.reading.get("session_minutes") for s in chosen["sessions"])):
        return "", _offer_at_length(run, chosen, int(run.reading.get("session_minutes")))
    confirmation, scheduled = _schedule_chosen(run, run.toolbox, chosen)
    if run.tracker or not scheduled:
        return "", confirmation
    run.outcome = "ok"
    text = phrase(run, run.system, run.context, run.history, run.toolbox,
                  f"{run.message.content}\n(Encourage me about the sessions just scheduled.)",
                  "Nice choice — that's a plan you can keep.", run.profile.goal_category,
                  extra_check=_schedule_talk_findings, max_sentences=2)
    return _planner_words(run, text), confirmation


def _offer_at_length(run: Run, chosen: dict, minutes: int) -> str:
    """The option picked with another length ("the first one, 40 min instead") is offered again at
    that length, not scheduled: the words may mean every session or only one, and nothing is
    scheduled that the learner did not accept as it will be."""
    relength = {**chosen, "label": "A", "summary": re.sub(r"\b\d+ min\b", f"{minutes} min", chosen["summary"]),
                "sessions": [{**s, "minutes": minutes} for s in chosen["sessions"]]}
    run.offered_options = [relength]
    return f"At {minutes} min a session: {relength['summary']}. Shall I schedule that? Say “yes” and I will."


def _target(reading) -> dict:
    return {k: reading.get(k) for k in ("days", "time", "time_of_day") if reading.has(k)}


def _move(run: Run, session_ref: str | None, target: dict, *, confirm: bool = False) -> str:
    """Move the one session the learner named to the time they named: one write, stated, undoable.
    Asks which session, or to when, rather than guessing either; with `confirm`, asks whether to
    move it at all (one pending option, moved on a yes)."""
    upcoming = sessions_upcoming(learner=run.learner)
    session = next((s for s in upcoming if str(s.pk) == str(session_ref)), None) if session_ref else None
    if session is None and session_ref:
        session = PlannedSession.objects.select_related("plan__learner").filter(
            pk=session_ref, plan__learner=run.learner).first()
    if session is None:
        if not upcoming:
            return "You have no planned session to move. Say “let's plan” and I'll suggest some."
        if len(upcoming) == 1 and not run.reading.has("session_not_planned"):
            session = upcoming[0]
        else:
            run.offered_options = [{"label": "ABCDE"[i], "kind": "move", "session_id": s.pk, "target": target,
                                    "summary": when(s), "day": when(s)[:3]} for i, s in enumerate(upcoming[:5])]
            listing = " or ".join(f"{o['label']}: {o['summary']}" for o in run.offered_options)
            return f"{_not_planned(run)}Which session should I move — {listing}?"
    start = _new_start(run, session, target)
    if start is None:
        run.offered_options = [{"label": "A", "kind": "move", "session_id": session.pk, "target": {},
                                "summary": when(session), "day": when(session)[:3]}]
        return (f"To when should I move your {when(session)} session? For example “Saturday morning” or "
                "“Friday at 18:00”.")
    if start == session.planned_start:
        return f"Your {when(session)} session is already then: nothing to move."
    if clash := session_overlapping(learner=run.learner, start=start, minutes=session.duration_minutes,
                                    moving=session.pk):
        # Not offered: the write would be refused (one session at a time). The learner says another time.
        run.offered_options = [{"label": "A", "kind": "move", "session_id": session.pk, "target": {},
                                "summary": when(session), "day": when(session)[:3]}]
        return (f"Your {when(clash)} session is already then, so I can't move your {when(session)} session there. "
                "To when else should I move it?")
    if confirm:
        to = when_at(session, start.isoformat())
        run.offered_options = [{"label": "A", "kind": "move", "session_id": session.pk, "target": target,
                                "summary": f"{when(session)} to {to}", "day": when(session)[:3]}]
        return (f"Shall I move your {when(session)} session to {to}? Say “yes” and I will; otherwise it stays "
                "where it is.")
    result = run.toolbox.call("move_session", {"session_id": session.pk, "start": start.isoformat()}, by="code")
    if "error" in result:
        return f"I couldn't move your {when(session)} session: {result['error']}. It stays where it was."
    moved = PlannedSession.objects.select_related("plan__learner").get(pk=session.pk)
    return (f"Moved: your {when_at(session, result['previous']['start'])} session is now {when(moved)} "
            f"({moved.duration_minutes} min). Say “undo” to put it back.")


def _not_planned(run: Run) -> str:
    """The day the learner named a session on when no session is planned that day, said first."""
    days = run.reading.get("session_not_planned") or ()
    named = " or ".join(WEEKDAYS[DAY_CODES.index(d)].capitalize() for d in days)
    return f"There's no {named} session in your plan. " if named else ""


def when_at(session, iso: str) -> str:
    local = datetime.fromisoformat(iso).astimezone(learner_tz(session.plan.learner))
    return local.strftime("%a %H:%M")


def _new_start(run: Run, session, target: dict) -> datetime | None:
    """The new start from what the learner named: a day (the next one of that name), a clock time or
    a time of day; what they did not name keeps the session's own day or time."""
    tz = learner_tz(run.learner)
    now = timezone.now().astimezone(tz)
    local = session.planned_start.astimezone(tz)
    days, clock, part = target.get("days") or (), target.get("time"), target.get("time_of_day")
    if not days and not clock and not part:
        return None
    hour, minute = local.hour, local.minute
    if clock:
        hour, minute = (int(x) for x in clock.split(":"))
    elif part:
        hour, minute = _SLOT_HOUR.get(part, hour), 0
    if days:
        wanted = DAY_CODES.index(days[0])
        day = now.date() + timedelta(days=(wanted - now.weekday()) % 7)
    else:
        day = local.date()
    start = datetime(day.year, day.month, day.day, hour, minute, tzinfo=tz)
    if start <= now:
        start += timedelta(days=7 if days else 1)
    return start


def _cancel(run: Run) -> str:
    upcoming = sessions_upcoming(learner=run.learner)
    ref = run.reading.get("session")
    session = next((s for s in upcoming if str(s.pk) == str(ref)), None) if ref else (
        upcoming[0] if len(upcoming) == 1 else None)
    if session is None:
        if not upcoming:
            return "You have no planned session to cancel."
        listing = ", ".join(when(s) for s in upcoming[:5])
        return f"Which session should I cancel? You have {listing}. Name its day, like “cancel Thursday's”."
    if run.reading.proposed:
        # Only a model's proposal read a cancel here: asked about, cancelled on a yes.
        run.offered_options = [{"label": "A", "kind": "cancel", "session_id": session.pk, "summary": when(session)}]
        return f"Shall I cancel your {when(session)} session? Say “yes” and I will; otherwise it stays in your plan."
    return _cancel_session(run, session)


def _cancel_session(run: Run, session) -> str:
    result = run.toolbox.call("cancel_session", {"session_id": session.pk}, by="code")
    if "error" in result:
        return f"I couldn't cancel your {when(session)} session: {result['error']}."
    return f"Cancelled: your {when(session)} session. Say “undo” to put it back."


def _answer_from_plan(run: Run) -> str:
    """A question about the plan, the calendar or progress, answered from the database."""
    about = run.reading.get("about")
    upcoming = sessions_upcoming(learner=run.learner)
    if about == "calendar":
        from coaching.research.selectors import calendar_subscription_confirmed

        where = (f"{len(upcoming)} planned session{'s' if len(upcoming) != 1 else ''} "
                 f"({', '.join(when(s) for s in upcoming[:5])})" if upcoming else "no planned sessions yet")
        if calendar_subscription_confirmed(run.learner.pk):
            return (f"You have {where}. You told me you subscribed to your Bloom calendar feed, so your calendar app "
                    "shows them as it refreshes the feed. I can't write into Google Calendar directly.")
        return (f"No — I can't put sessions into Google Calendar myself, and you haven't confirmed subscribing to your "
                f"Bloom calendar feed, so I can't say they are there. You have {where} in Bloom. Subscribe to the "
                "feed link from your Bloom account in Google Calendar (“From URL”) and they'll appear there.")
    if about == "progress":
        p = progress_for(learner=run.learner)
        return (f"So far: {p['completed']} done, {p['skipped']} skipped, {p['missed']} missed, "
                f"{p['planned']} still planned.")
    if not upcoming:
        return "Nothing is planned right now. Say “let's plan” and I'll suggest sessions that fit your week."
    return ("Your plan: " + ", ".join(f"{when(s)} ({s.duration_minutes} min)" for s in upcoming[:7]) + ". "
            "Tell me if you'd like to move or cancel one.")


def _offer(run: Run) -> tuple[str, str]:
    profile, rule, message = run.profile, run.decision.rule, run.message
    lead = ""
    missed = sessions_missed(learner=run.learner) if rule == "move_request" else []
    if missed:
        # Missed sessions lead to reschedule options, resolved by code next turn ("yes", "the second one").
        run.offered_options = reschedule_options(learner=run.learner, profile=profile, missed=missed)
        names = ", ".join(when(s) for s in missed)
        lead = (f"You missed {len(missed)} session{'s' if len(missed) > 1 else ''} ({names}). "
                f"Here's how we could move {'them' if len(missed) > 1 else 'it'}:\n")
        reply_hint = "Reply “yes” for option A or “the second one” for option B, and I'll schedule it."
    else:
        request = _request(run.reading)
        if planned := sessions_upcoming(learner=run.learner):
            lead += (f"You already have {len(planned)} session{'s' if len(planned) > 1 else ''} planned "
                     f"({', '.join(when(s) for s in planned)}); times that are taken are left as they are.\n")
            lead += _planned_on_excluded_days(run, planned, request)
        run.offered_options = plan_options(learner=run.learner, profile=profile, request=request)
        lead += _request_read(request)
        reply_hint = "Reply “option A” or “option B” and I'll schedule it."
    listing = "\n".join(f"Option {o['label']}: {o['summary']}" for o in run.offered_options)
    if len(run.offered_options) == 1:
        reply_hint = "Reply “yes” and I'll schedule it."
    if not run.offered_options:
        reply_hint, listing = "", "I couldn't find a free time that fits what you said: which days and times are free?"
    suffix = f"{lead}{listing}\n{reply_hint}".strip()
    if run.tracker:
        run.outcome = "templated"
        return "", suffix
    fallback = prompts.fallback_for(PLANNER, profile.primary_goal, run.previous_replies)
    text = phrase(run, run.system, run.context, run.history, run.toolbox,
                  f"{message.content}\n(Schedule options follow your reply; do not list times yourself.)",
                  fallback, profile.goal_category, extra_check=_schedule_talk_findings, max_sentences=2)
    return _planner_words(run, text) or fallback, suffix


def _request(reading) -> PlanRequest:
    """The request to plan as the reading settled it (days, time, a taken time, a sitting's length)."""
    days = reading.get("days")
    hour, minute = (int(part) for part in reading.get("time").split(":")) if reading.has("time") else (None, 0)
    return PlanRequest(days=frozenset(DAY_CODES.index(d) for d in days) if days else None,
                       best_time=reading.get("time_of_day"), hour=hour, minute=minute,
                       busy_time=reading.get("busy_time"), unplaced=reading.get("unplaced") or "",
                       session_minutes=reading.get("session_minutes"),
                       days_ruled_out=bool(reading.get("days_ruled_out")))


def _planned_on_excluded_days(run: Run, planned: list, request: PlanRequest) -> str:
    """A planned session on a day the learner now says does not work is named, not left unsaid:
    "plan my week, I'm busy on Tuesday" with a Tuesday session planned got new options and no
    word of that session. It stays planned: code does not cancel
    what the learner did not ask to cancel."""
    if request.days is None or not request.days_ruled_out:
        return ""
    tz = learner_tz(run.learner)
    clash = [s for s in planned if s.planned_start.astimezone(tz).weekday() not in request.days]
    if not clash:
        return ""
    names = ", ".join(when(s) for s in clash)
    return (f"Note: {names} {'is' if len(clash) == 1 else 'are'} on a day you said doesn't work; "
            f"{'it is' if len(clash) == 1 else 'they are'} still in your plan.\n")


def _request_read(request: PlanRequest) -> str:
    """What code took from the request to plan, said before the options, and what it could not
    place, said as such: "around my night shifts" once got the profile's options with no word
    that the shifts were not used."""
    said = request.said()
    line = f"Going by what you said: {', '.join(said)}.\n" if said else ""
    if request.unplaced:
        line = (f"You mentioned your {request.unplaced}, but I can't tell from that which days or times are "
                "free, so "
                + (f"I only kept to what I could read: {', '.join(said)}. " if said else "these use your usual time. ")
                + "Tell me the days or times you're free (like “only Tuesdays and Saturdays at 14:00”) "
                "and I'll plan around them.\n")
    return line


# Code renders every day, time and option; the model's words may only frame them. A small model
# invents its own times (seen: "Morning: 8:00 AM - 9:00 AM" next to code's options), so a
# sentence or line talking schedule stops the stream and is dropped from the stored words.
_SCHEDULE_TALK = re.compile(
    r"\d|\boption|\b(mon|tues|wednes|thurs|fri|satur|sun)day|\bmorning:|\bhere (are|is)\b", re.I)


def _schedule_talk(text: str) -> tuple[list[str], list[str]]:
    """(the sentences and lines of `text`, those of them talking schedule or opening a list)."""
    pieces = [p.strip() for p in re.split(r"(?<=[.!?])\s+|\n+", text) if p.strip()]
    return pieces, [p for p in pieces if _SCHEDULE_TALK.search(p) or p.endswith(":")]


def _schedule_talk_findings(text: str) -> list:
    """In a stream, the planner's words stop at the first piece talking schedule."""
    _, bad = _schedule_talk(text)
    return [guard.Finding("planner_schedule_talk", bad[0][:80])] if bad else []


def _planner_words(run: Run, text: str) -> str:
    """The model's framing words: every piece talking schedule dropped, at most two kept."""
    pieces, bad = _schedule_talk(text)
    kept = [p for p in pieces if p not in bad][:2]
    if len(kept) != len(pieces):
        run.guard_event("planner_schedule_talk", f"dropped {len(pieces) - len(kept)} of {len(pieces)} pieces",
                        "kept framing only")
    return " ".join(kept)
