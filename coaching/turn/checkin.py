"""The check-in specialist: the reading says what was reported and on which session; code writes a check-in only for an
unambiguous session (otherwise asks which one), states what it wrote and offers to move a skipped
session; the model's words only respond to how it went."""

from __future__ import annotations

from coaching.models import PlannedSession
from coaching.services import reschedule_options
from coaching.turn import prompts
from coaching.turn.dialogue import sessions_missed, sessions_reportable
from coaching.turn.phrasing import phrase, when
from coaching.turn.reading.types import REPORT
from coaching.turn.router import CHECKIN

UNDO_HINT = "Say “undo” if that's not right."


def _log_reports(run, toolbox, sessions: list, outcome: str) -> str:
    """log_checkin per session (or one unattached check-in), then the statement of what was written."""
    word = "done" if outcome == "completed" else "skipped"
    if not sessions:
        toolbox.call("log_checkin", {"outcome": outcome}, by="code")
        what = "a practice you did" if outcome == "completed" else "a skipped practice"
        return f"Logged: {what} (not linked to a planned session). {UNDO_HINT}"
    for session in sessions:
        toolbox.call("log_checkin", {"outcome": outcome, "session_id": session.id}, by="code")
    names = " and ".join(when(s) for s in sessions)
    plural = "sessions" if len(sessions) > 1 else "session"
    return f"Logged: your {names} {plural} as {word}. {UNDO_HINT}"


def _offer_report(run, session, outcome: str) -> str:
    word = "done" if outcome == "completed" else "skipped"
    summary = when(session) if session is not None else "a practice not linked to a planned session"
    option = {"label": "A", "kind": "report", "session_id": getattr(session, "id", None), "outcome": outcome,
              "summary": summary}
    run.offered_options = [{**option, "day": summary[:3]} if session is not None else option]
    run.outcome = "templated"
    what = f"your {summary} session" if session is not None else "a practice (not linked to a planned session)"
    return f"Shall I log {what} as {word}? Say “yes” and I will."


def checkin_turn(run) -> tuple[str, str]:
    reading, previous, toolbox, profile = run.reading, run.previous, run.toolbox, run.profile
    sessions: list = []
    outcome = ""
    if run.decision.rule == "report_choice" and previous is not None:
        options = previous.offered_options
        if reading.get("option") == "none":
            run.outcome = "templated"
            return "", "OK — I haven't logged anything."
        chosen = next((o for o in options if o["label"] == reading.get("option")), None)
        if chosen is None:
            run.offered_options = options
            run.outcome = "templated"
            return "", "Which one do you mean? " + " or ".join(f"{o['label']}: {o['summary']}" for o in options) + "."
        sessions = list(PlannedSession.objects.select_related("plan__learner").filter(
            pk=chosen["session_id"], plan__learner=run.learner))
        outcome = chosen["outcome"]
    elif reading.act == REPORT and reading.get("outcome"):
        outcome = reading.get("outcome")
        candidates = sessions_reportable(learner=run.learner)
        named = reading.get("session")
        refs = {str(named)} if named else {str(r) for r in reading.get("sessions", ())}
        sessions = [s for s in candidates if str(s.pk) in refs]
        if not sessions and len(candidates) > 1:
            # No write on an ambiguous reference: ask which session, resolved by code next turn.
            run.offered_options = [{"label": "ABCDE"[i], "kind": "report", "session_id": s.id, "outcome": outcome,
                                    "summary": when(s), "day": when(s)[:3]} for i, s in enumerate(candidates[:5])]
            run.guard_event("reading", f"report ({outcome}) with no unambiguous session", "asked which")
            run.outcome = "templated"
            verb = "do" if outcome == "completed" else "skip"
            listing = " or ".join(f"{o['label']}: {o['summary']}" for o in run.offered_options)
            return "", f"Which session did you {verb} — {listing}?"
        if not sessions and len(candidates) == 1 and not named:
            sessions = candidates
        if reading.proposed or not reading.settled:
            # Only a model's proposal read a report here ("knocked out 3 leetcode mediums"), or the
            # rules read one they could not tie to a session ("GOT THE JOB!!!"): asked about,
            # logged on a yes.
            return "", _offer_report(run, sessions[0] if sessions else None, outcome)
    if not outcome:
        # Check-in due but the message is not a report: ask about the session (templated question).
        due_when = when(run.due) if run.due else "your last session"
        question = f"How did your session ({due_when}) go — did you do it or skip it?"
        if run.tracker:
            run.outcome = "templated"
            return "", question
        text = phrase(run, run.system, run.context, run.history, toolbox, run.message.content, "",
                      profile.goal_category)
        return text, question
    confirmation = _log_reports(run, toolbox, sessions, outcome)
    if outcome == "skipped":
        missed = sessions_missed(learner=run.learner)
        if missed:
            run.offered_options = reschedule_options(learner=run.learner, profile=profile, missed=missed)
            listing = "\n".join(f"Option {o['label']}: {o['summary']}" for o in run.offered_options)
            confirmation += (f"\nWant to move {'them' if len(missed) > 1 else 'it'}?\n{listing}\n"
                             "Reply “yes” for option A or “the second one” for option B.")
    if run.tracker:
        run.outcome = "templated"
        return "", confirmation
    text = phrase(run, run.system, run.context, run.history, toolbox, run.message.content,
                  prompts.fallback_for(CHECKIN, profile.primary_goal, run.previous_replies),
                  profile.goal_category)
    return text, confirmation
