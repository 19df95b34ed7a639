from __future__ import annotations

from rest_framework import serializers


class ExportQuerySerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=["csv", "parquet"], default="csv")
    complete_weeks_only = serializers.BooleanField(default=False)


class CalendarImportSerializer(serializers.Serializer):
    ics = serializers.CharField(max_length=2_000_000, trim_whitespace=False)


class CalendarFeedOutSerializer(serializers.Serializer):
    url = serializers.CharField()
    created_at = serializers.DateTimeField()
    subscription_confirmed = serializers.BooleanField()


class CalendarImportOutSerializer(serializers.Serializer):
    matched_uid = serializers.IntegerField()
    bloom_feed = serializers.IntegerField(help_text="events of Bloom's own feed in the file: never evidence")
    already_done = serializers.IntegerField()
    unmatched = serializers.IntegerField()
    not_ended = serializers.IntegerField()
    session_ids = serializers.ListField(child=serializers.UUIDField(),
                                        help_text="public ids of the sessions marked completed")
