from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from rest_framework import serializers

from coaching.models import BestTime, Conversation, GoalCategory, Learner, LearnerProfile, Message, StudyArm


class LearnerCreateIn(serializers.Serializer):
    display_name = serializers.CharField(max_length=120, required=False, allow_blank=True, default="")
    study_arm = serializers.ChoiceField(choices=StudyArm.choices, default=StudyArm.COACH)
    timezone = serializers.CharField(max_length=64, default="UTC")


class ProfileOut(serializers.ModelSerializer):
    onboarded = serializers.BooleanField(read_only=True)

    class Meta:
        model = LearnerProfile
        fields = ["primary_goal", "goal_category", "weekly_hours", "best_time", "confidence", "onboarding_step",
                  "onboarded", "onboarding_completed_at", "updated_at"]


class ProfileUpdateIn(serializers.Serializer):
    primary_goal = serializers.CharField(max_length=300, required=False, allow_blank=False)
    goal_category = serializers.ChoiceField(choices=GoalCategory.choices, required=False)
    weekly_hours = serializers.DecimalField(max_digits=4, decimal_places=1, min_value=Decimal("0.5"),
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
    class Meta:
        model = Message
        fields = ["id", "role", "content", "specialist", "status", "reply_to", "trace_id", "idempotency_key",
                  "created_at"]


class ConversationOut(serializers.ModelSerializer):
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
