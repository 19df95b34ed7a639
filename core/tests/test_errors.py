"""The one API error type and handler (core.errors): every validation error is listed, the first is
repeated at the top, and an ApplicationError raised anywhere becomes the same shape."""

from __future__ import annotations

import pytest
from rest_framework import serializers
from rest_framework.test import APIClient

from core.errors import ApplicationError, api_exception_handler
from core.identity import services as identity_services

pytestmark = pytest.mark.django_db


@pytest.fixture
def api():
    client = identity_services.api_client_create(name="errors")
    _, raw = identity_services.api_token_create(client=client)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return api


def test_every_validation_error_is_listed_and_the_first_repeated_at_the_top(api):
    response = api.post("/api/v1/learners", {"display_name": "x" * 121, "study_arm": "neither"}, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert sorted(e["field"] for e in error["errors"]) == ["display_name", "study_arm"]
    assert {k: error[k] for k in ("code", "message", "field")} == error["errors"][0]
    assert all(e["code"] and e["message"] for e in error["errors"])


def test_an_application_error_keeps_its_code_field_and_status():
    response = api_exception_handler(ApplicationError("no such week", code="not_found", field="week", status=404), {})
    assert response.status_code == 404
    assert response.data == {"error": {"code": "not_found", "message": "no such week", "field": "week",
                                       "errors": [{"code": "not_found", "message": "no such week", "field": "week"}]}}


def test_nested_validation_errors_name_the_dotted_field():
    class Item(serializers.Serializer):
        content = serializers.CharField(max_length=3)

    class Batch(serializers.Serializer):
        items = Item(many=True)

    data = Batch(data={"items": [{"content": "toolong"}, {"content": "ok"}]})
    assert not data.is_valid()
    response = api_exception_handler(serializers.ValidationError(data.errors), {})
    assert [e["field"] for e in response.data["error"]["errors"]] == ["items.0.content"]
