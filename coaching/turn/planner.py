"""The planner specialist: code offers the plan (or reschedule) options and, on "option B" /
"yes", schedules the one picked; the model's words may only frame them."""

from __future__ import annotations

import re

from coaching import guard, prompts
from coaching.dialogue import learner_texts, sessions_missed
from coaching.intent import resolve_option
from coaching.plan_request import PlanRequest, read_plan_request, with_earlier
from coaching.router import PLANNER
from coaching.selectors import sessions_upcoming
from coaching.services import learner_tz, plan_options, reschedule_options
from coaching.turn.phrasing import phrase, when
from coaching.turn.state import Run


def _schedule_chosen(run, toolbox, chosen: dict) -> tuple[str, int]:
    """Code acts on the option it offered: one schedule_session call per slot, then says what it
    did. Returns the confirmation and how many sessions were scheduled."""
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


def planner_turn(run, profile, rule, previous, message, system, context, history, toolbox,
                 tracker) -> tuple[str, str]:
    if rule == "option_answer" and previous is not None:
        chosen = resolve_option(message.content, previous.offered_options)
        if chosen is not None:
            confirmation, scheduled = _schedule_chosen(run, toolbox, chosen)
            if tracker or not scheduled:
                # Nothing was scheduled: no words of the model's about "the sessions just scheduled".
                run.outcome = "templated"
                return "", confirmation
            text = phrase(run, system, context, history, toolbox,
                          f"{message.content}\n(Encourage me about the sessions just scheduled.)",
                          "Nice choice — that's a plan you can keep.", profile.goal_category,
                          extra_check=_schedule_talk_findings, max_sentences=2)
            return _planner_words(run, text), confirmation
    lead = ""
    missed = sessions_missed(learner=run.learner) if rule == "reschedule_request" else []
    if missed:
        # Missed sessions lead to reschedule options, resolved by code next turn ("yes", "the second one").
        run.offered_options = reschedule_options(learner=run.learner, profile=profile, missed=missed)
        names = ", ".join(when(s) for s in missed)
        lead = (f"You missed {len(missed)} session{'s' if len(missed) > 1 else ''} ({names}). "
                f"Here's how we could move {'them' if len(missed) > 1 else 'it'}:\n")
        reply_hint = "Reply “yes” for option A or “the second one” for option B, and I'll schedule it."
    else:
        if rule == "reschedule_request":
            lead = "I don't see a missed session in the last two weeks — here are options for the coming days:\n"
        # Days said earlier in the conversation count when this message names none (plan_request.with_earlier).
        request = with_earlier(read_plan_request(message.content),
                               learner_texts(conversation=message.conversation, before=message))
        if rule != "reschedule_request" and (planned := sessions_upcoming(learner=run.learner)):
            # Asked to plan with a plan in place, the coach offered the same options as if there were
            # none (trial of 2026-12-03, evening): what is already planned is said first.
            lead += (f"You already have {len(planned)} session{'s' if len(planned) > 1 else ''} planned "
                     f"({', '.join(when(s) for s in planned)}); times that are taken are left as they are.\n")
            lead += _planned_on_excluded_days(run, planned, request)
        run.offered_options = plan_options(learner=run.learner, profile=profile, request=request)
        lead += _request_read(request)
        reply_hint = "Reply “option A” or “option B” and I'll schedule it."
    listing = "\n".join(f"Option {o['label']}: {o['summary']}" for o in run.offered_options)
    if len(run.offered_options) == 1:
        reply_hint = "Reply “yes” and I'll schedule it."
    suffix = f"{lead}{listing}\n{reply_hint}"
    if tracker:
        run.outcome = "templated"
        return "", suffix
    if rule == "reschedule_request" and not missed:
        # Nothing to move, and code's first line says so. Asked to frame it, the model agreed to
        # move the sessions the learner had named ("Sure, I can move the two sessions to the
        # afternoon.") right above that line (seen trying it): this reply is code's alone.
        run.outcome = "templated"
        return "", suffix
    fallback = prompts.fallback_for(PLANNER, profile.primary_goal, run.previous_replies)
    text = phrase(run, system, context, history, toolbox,
                  f"{message.content}\n(Two schedule options follow your reply; do not list times yourself.)",
                  fallback, profile.goal_category, extra_check=_schedule_talk_findings, max_sentences=2)
    return _planner_words(run, text) or fallback, suffix


def _planned_on_excluded_days(run: Run, planned: list, request: PlanRequest) -> str:
    """A planned session on a day the learner now says does not work is named, not left unsaid:
    "plan my week, I'm busy on Tuesday" with a Tuesday session planned got new options and no
    word of that session (trial of 2026-12-03, night). It stays planned: code does not cancel
    what the learner did not ask to cancel."""
    if request.days is None:
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
    that the shifts were not used (trial of 2026-12-03)."""
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
