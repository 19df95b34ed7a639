"""Research writes, one module per job: `studies` (creation, allocation sequence, date shift),
`enrolment`, `calendars` (feeds and the calendar import), `missed` (the missed-session sweep),
`reminders` and `export_logs`. `<noun>_<verb>`, keyword-only, typed, atomic; errors are
`core.errors.ApplicationError`. A session's status is only ever changed through
`coaching.services.session_status`, which writes the audit row.

The API views, tasks, the export command, the simulation and the tests use these through the
package (`from coaching.research import services`), so it names them all here."""

from coaching.research.services.calendars import (
    ImportResult,
    calendar_feed_create,
    calendar_feed_touch,
    calendar_import,
    calendar_subscription_confirm,
    hash_feed_token,
    session_uid,
)
from coaching.research.services.enrolment import (
    UNKNOWN_STRATUM,
    enrollment_arms_apply,
    enrollment_create,
    enrollment_withdraw,
    enrollments_keep_on_learner_delete,
    enrollments_learner_erased,
    learner_treatment_follows_enrollment,
)
from coaching.research.services.export_logs import export_log_finish, export_log_start
from coaching.research.services.missed import sessions_mark_missed
from coaching.research.services.reminders import (
    reminder_channel,
    reminder_create,
    reminder_deliver,
    reminder_text,
    reminders_send_due,
)
from coaching.research.services.studies import arm_for_slot, block_arms, study_create, study_date_shift_days

__all__ = [
    "UNKNOWN_STRATUM", "ImportResult", "arm_for_slot", "block_arms", "calendar_feed_create", "calendar_feed_touch",
    "calendar_import", "calendar_subscription_confirm", "enrollment_arms_apply", "enrollment_create",
    "enrollment_withdraw", "enrollments_keep_on_learner_delete", "enrollments_learner_erased",
    "export_log_finish", "export_log_start", "hash_feed_token", "learner_treatment_follows_enrollment",
    "reminder_channel", "reminder_create", "reminder_deliver", "reminder_text", "reminders_send_due",
    "session_uid", "sessions_mark_missed", "study_create", "study_date_shift_days",
]
