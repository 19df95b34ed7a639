"""Coaching writes (`<noun>_<verb>`, keyword-only, atomic), one module per job: `learners` (and
chat links), `profiles`, `messages`, `plans` (sessions and the options the coach offers),
`checkins`, `session_status` (the one audited writer of a session's status) and `context` (the
memory read path `context_for`). Errors are `core.errors.ApplicationError`.

The turn, the tools, the API views and many tests use these through the package
(`from coaching import services`), so it names them all here."""

from coaching.services.checkins import checkin_log, checkin_undo
from coaching.services.context import context_for, profile_line
from coaching.services.learners import (
    chat_link_create,
    chat_links_revoke,
    learner_create,
    learner_tz,
    staff_demo_user_ensure,
)
from coaching.services.messages import (
    coach_message_post,
    conversation_start,
    message_mark_unanswered,
    message_receive,
    message_status_set,
)
from coaching.services.plans import (
    plan_options,
    reschedule_options,
    session_cancel,
    session_due,
    session_makeup_apply,
    session_makeup_undo,
    session_move,
    session_reschedule,
    session_schedule,
    session_unschedule,
    week_start_for,
)
from coaching.services.profiles import PROFILE_FIELDS, profile_apply_onboarding, profile_restore, profile_update
from coaching.services.session_status import StatusSource, session_status_set, sessions_status_set_bulk

__all__ = [
    "PROFILE_FIELDS", "StatusSource", "chat_link_create", "chat_links_revoke", "checkin_log", "checkin_undo",
    "coach_message_post", "context_for", "conversation_start", "learner_create", "learner_tz",
    "message_mark_unanswered", "message_receive", "message_status_set", "plan_options", "profile_apply_onboarding",
    "profile_line", "profile_restore", "profile_update", "reschedule_options", "session_cancel", "session_due",
    "session_makeup_apply", "session_makeup_undo", "session_move", "session_reschedule", "session_schedule",
    "session_status_set", "session_unschedule", "sessions_status_set_bulk", "staff_demo_user_ensure",
    "week_start_for",
]
