from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from drf_spectacular.utils import PolymorphicProxySerializer
from rest_framework import serializers

from coaching.models import (
    BestTime,
    CheckIn,
    CheckInOutcome,
    Conversation,
    GoalCategory,
    Learner,
    LearnerProfile,
    Message,
    Plan,
    PlannedSession,
    SessionStatus,
    StudyArm,
    Turn,
)


class LearnerCreateIn(serializers.Serializer):
    display_name = serializers.CharField(max_length=120, required=False, allow_blank=True, default="")
    study_arm = serializers.ChoiceField(choices=StudyArm.choices, default=StudyArm.COACH)
    timezone = serializers.CharField(max_length=64, default="UTC")


class ProfileOut(serializers.ModelSerializer):
    onboarded = serializers.BooleanField(read_only=True)
    # Declared: the model's float validators would make DRF warn when building the field.
    weekly_hours = serializers.DecimalField(max_digits=5, decimal_places=2, read_only=True, allow_null=True)

    class Meta:
        model = LearnerProfile
        fields = ["primary_goal", "goal_category", "weekly_hours", "best_time", "confidence", "onboarding_step",
                  "onboarded", "onboarding_completed_at", "updated_at"]


class ProfileUpdateIn(serializers.Serializer):
    primary_goal = serializers.CharField(max_length=300, required=False, allow_blank=False)
    goal_category = serializers.ChoiceField(choices=GoalCategory.choices, required=False)
    weekly_hours = serializers.DecimalField(max_digits=5, decimal_places=2, min_value=Decimal("0.5"),
                                            max_value=Decimal("80"), required=False)
    best_time = serializers.ChoiceField(choices=BestTime.choices, required=False)
    confidence = serializers.IntegerField(min_value=1, max_value=10, required=False)


class LearnerOut(serializers.ModelSerializer):
    id = serializers.UUIDField(source="research_id", read_only=True)
    profile = ProfileOut(read_only=True)

    class Meta:
        model = Learner
        fields = ["id", "display_name", "study_arm", "timezone", "created_at", "profile"]


class MessageOut(serializers.ModelSerializer):
    id = serializers.UUIDField(source="public_id", read_only=True)
    # A coach reply's learner message, by its public id (reply_to is loaded with the row: the
    # selectors select_related it, a fresh reply holds it already).
    reply_to = serializers.UUIDField(source="reply_to.public_id", allow_null=True, read_only=True)

    class Meta:
        model = Message
        fields = ["id", "role", "content", "specialist", "status", "reply_to", "trace_id", "idempotency_key",
                  "created_at"]


class ConversationOut(serializers.ModelSerializer):
    id = serializers.UUIDField(source="public_id", read_only=True)
    learner = serializers.UUIDField(source="learner.research_id", read_only=True)
    messages = MessageOut(many=True, read_only=True)

    class Meta:
        model = Conversation
        fields = ["id", "learner", "created_at", "messages"]


class MessageIn(serializers.Serializer):
    content = serializers.CharField(allow_blank=False, trim_whitespace=True,
                                    error_messages={"blank": "Message is empty.", "required": "Message is empty."})
    idempotency_key = serializers.CharField(max_length=128, required=False, allow_blank=False)

    def validate_content(self, value: str) -> str:
        limit = settings.BLOOM_MAX_MESSAGE_CHARS
        if len(value) > limit:
            raise serializers.ValidationError(
                f"Message is too long: {len(value)} characters; the limit is {limit} characters.", code="too_long")
        return value


class TurnReplyOut(serializers.Serializer):
    message = MessageOut(help_text="the learner's message as stored")
    reply = MessageOut(help_text="the coach's reply")
    specialist = serializers.CharField(required=False, help_text="which specialist answered")
    trace_id = serializers.CharField(required=False, help_text="telemetry trace of the turn")
    replayed = serializers.BooleanField(required=False, help_text="true when an Idempotency-Key was seen before")


class TurnUnavailableDetail(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    field = serializers.CharField(allow_null=True)
    message_id = serializers.UUIDField(help_text="the learner's message, kept as unanswered")


class TurnUnavailableOut(serializers.Serializer):
    error = TurnUnavailableDetail()


# --- the streamed reply (`Accept: text/event-stream`) -------------------------------------------
# Frames are `event: <name>` + `data: <JSON>` (coaching/turn/streaming.py). OpenAPI 3.0 cannot type a
# stream, so the schema describes one frame as {event, data}: a client generated from it gets a
# model for each event's data.
class StreamTokenData(serializers.Serializer):
    text = serializers.CharField(help_text="the next piece of the reply, as generated")


class StreamFinalData(serializers.Serializer):
    message_id = serializers.UUIDField(help_text="the coach's stored reply")
    content = serializers.CharField(help_text="the reply as stored (show this if `replaced`)")
    specialist = serializers.CharField(help_text="which specialist answered")
    trace_id = serializers.CharField(help_text="telemetry trace of the turn")
    reply_to = serializers.UUIDField(allow_null=True, help_text="the learner's message")
    replaced = serializers.BooleanField(help_text="true when the stored content differs from the streamed text")


class StreamUnavailableData(serializers.Serializer):
    message = serializers.CharField()
    retry_after = serializers.FloatField(allow_null=True, help_text="seconds to wait before retrying")
    message_id = serializers.UUIDField(help_text="the learner's message, kept as unanswered")


class StreamErrorData(serializers.Serializer):
    message = serializers.CharField()
    message_id = serializers.UUIDField(help_text="the learner's message, kept as unanswered")


class StreamEvent(serializers.Serializer):
    event = serializers.CharField(help_text="the frame's `event:` line: token, final, unavailable or error")


class StreamTokenEvent(StreamEvent):
    data = StreamTokenData(help_text="any number, in order")


class StreamFinalEvent(StreamEvent):
    data = StreamFinalData(help_text="the last frame of a reply")


class StreamUnavailableEvent(StreamEvent):
    data = StreamUnavailableData(help_text="the model went down mid-reply (the last frame; retry with the same key)")


class StreamErrorEvent(StreamEvent):
    data = StreamErrorData(help_text="the reply could not be produced (the last frame)")


SSE_DESCRIPTION = ("With `Accept: text/event-stream` (a new message): a stream of frames `event: <event>` / "
                   "`data: <JSON>`; the schema describes one frame as {event, data}. `token` frames as the reply "
                   "is generated, then one `final` frame (the stored reply); `unavailable` or `error` instead "
                   "when the turn fails after the stream began.")
REPLAY_OR_STREAM = ("JSON: the same Idempotency-Key again, the stored reply (`replayed`). "
                    f"Event stream: {SSE_DESCRIPTION}")
# One frame of the stream, by its `event` (a generated client gets a model per event's data).
STREAM_FRAME = PolymorphicProxySerializer(
    component_name="TurnStreamEvent", resource_type_field_name="event", many=False,
    serializers={"token": StreamTokenEvent, "final": StreamFinalEvent, "unavailable": StreamUnavailableEvent,
                 "error": StreamErrorEvent})


class SessionOut(serializers.ModelSerializer):
    id = serializers.UUIDField(source="public_id", read_only=True)
    learner = serializers.UUIDField(source="plan.learner.research_id", read_only=True)
    week_start = serializers.DateField(source="plan.week_start", read_only=True)
    start = serializers.DateTimeField(source="planned_start")

    class Meta:
        model = PlannedSession
        fields = ["id", "learner", "week_start", "start", "duration_minutes", "topic", "status", "completed_at",
                  "completion_source", "created_at"]


class PlanOut(serializers.ModelSerializer):
    id = serializers.UUIDField(source="public_id", read_only=True)
    learner = serializers.UUIDField(source="learner.research_id", read_only=True)
    sessions = SessionOut(many=True, read_only=True)

    class Meta:
        model = Plan
        fields = ["id", "learner", "week_start", "created_at", "sessions"]


class WeekQuery(serializers.Serializer):
    week = serializers.DateField(required=False, help_text="any day of the week wanted (the learner's own "
                                                           "calendar); its Monday starts the plan")
    status = serializers.ChoiceField(choices=SessionStatus.choices, required=False)

    def week_start(self):
        day = self.validated_data.get("week")
        return day - timedelta(days=day.weekday()) if day else None


class LearnerLocalDateTimeField(serializers.DateTimeField):
    """A time without an offset stays naive here, so the service reads it in the learner's own
    time zone (DRF would read it in the server's)."""

    def enforce_timezone(self, value):
        return value


class SessionIn(serializers.Serializer):
    start = LearnerLocalDateTimeField(help_text="ISO 8601; without an offset it is the learner's local time")
    duration_minutes = serializers.IntegerField(min_value=5, max_value=600)
    topic = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")


class SessionPatchIn(serializers.Serializer):
    start = LearnerLocalDateTimeField(required=False, help_text="ISO 8601; without an offset: the learner's time")
    duration_minutes = serializers.IntegerField(min_value=5, max_value=600, required=False)
    topic = serializers.CharField(max_length=200, required=False, allow_blank=True)

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError({"start": "send start, duration_minutes and/or topic"})
        return attrs


class CheckInIn(serializers.Serializer):
    outcome = serializers.ChoiceField(choices=CheckInOutcome.choices)


class CheckInOut(serializers.ModelSerializer):
    id = serializers.UUIDField(source="public_id", read_only=True)
    learner = serializers.UUIDField(source="learner.research_id", read_only=True)
    session = serializers.UUIDField(source="session.public_id", allow_null=True, read_only=True)
    message = serializers.UUIDField(source="message.public_id", allow_null=True, read_only=True,
                                    help_text="the learner's message that reported it (none through the API)")

    class Meta:
        model = CheckIn
        fields = ["id", "learner", "session", "message", "outcome", "created_at"]


class CheckInCreatedOut(CheckInOut):
    session_detail = SessionOut(source="session", read_only=True, allow_null=True)

    class Meta(CheckInOut.Meta):
        fields = [*CheckInOut.Meta.fields, "session_detail"]


class TurnOut(serializers.ModelSerializer):
    id = serializers.UUIDField(source="public_id", read_only=True)
    learner_message = serializers.UUIDField(source="learner_message.public_id", read_only=True)
    reply = serializers.UUIDField(source="reply.public_id", allow_null=True, read_only=True)
    tools = serializers.SerializerMethodField(help_text="names of the tools called in this turn")

    class Meta:
        model = Turn
        fields = ["id", "learner_message", "reply", "specialist", "rule", "reason", "outcome", "trace_id",
                  "prompt_version", "model_calls", "tools", "timings", "created_at"]

    def get_tools(self, turn: Turn) -> list[str]:
        return [str(c.get("name", "")) for c in (turn.tool_calls or []) if isinstance(c, dict)]


class ChatLinkIn(serializers.Serializer):
    expires_in_minutes = serializers.IntegerField(min_value=5, max_value=60 * 24 * 30, default=60 * 24,
                                                  help_text="how long the link works (default one day)")


class ChatLinkOut(serializers.Serializer):
    url = serializers.URLField(help_text="the learner's chat page; shown once, give it to the learner only")
    expires_at = serializers.DateTimeField()


class ChatLinksRevokedOut(serializers.Serializer):
    revoked = serializers.IntegerField(help_text="links that stopped working")
