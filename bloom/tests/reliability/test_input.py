"""Bad input, tested: one error shape on every endpoint and status (400/401/403/404/405/413/415/
429/500), size limits for messages and request bodies, an OpenAPI schema that generates without
warnings, and Swagger UI served with no third-party URL."""

from __future__ import annotations

import io
import re
import uuid

import pytest
from django.core.management import call_command
from django.test import override_settings

from bloom.tests.reliability.conftest import error_of
from bloom.tests.reliability.test_access import _fill, _methods, api_v1_patterns

pytestmark = pytest.mark.django_db

MISSING = {"research_id": str(uuid.uuid4()), "learner_id": "987654321", "conversation_id": "987654321",
           "fact_id": "987654321", "token_id": "987654321", "trace_id": "0" * 32, "pk": "987654321",
           "run_id": "987654321", "token": "0" * 40, "session_id": "987654321", "study_id": "987654321"}


def test_every_endpoint_answers_missing_ids_and_wrong_methods_in_the_error_shape(tenants):
    a, _ = tenants
    checked = 0
    for route, callback, params in api_v1_patterns():
        url = _fill(route, MISSING)
        if params:
            for method in _methods(callback):
                response = getattr(a.api, method)(url, {"content": "x"} if method != "get" else None, format="json")
                assert 400 <= response.status_code < 500, (method, url, response.status_code)
                error_of(response)
                checked += 1
        allowed = set(_methods(callback))
        wrong = next((m for m in ("put", "patch", "delete", "post") if m not in allowed), None)
        if wrong and getattr(callback, "view_class", None) is not None:
            response = getattr(a.api, wrong)(url, {}, format="json")
            assert response.status_code in (403, 404, 405), (wrong, url, response.status_code)
            error_of(response)
            checked += 1
    assert checked >= 20


def test_unknown_api_url_is_a_404_in_the_error_shape(tenants):
    a, _ = tenants
    response = a.api.get("/api/v1/no-such-thing")
    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"


def test_405_and_415_in_the_error_shape(tenants):
    a, _ = tenants
    response = a.api.delete("/api/v1/learners")
    assert response.status_code == 405
    assert error_of(response)["code"] == "method_not_allowed"
    assert "GET" in response["Allow"]
    response = a.api.post("/api/v1/learners", data="display_name=x", content_type="text/plain")
    assert response.status_code == 415
    assert error_of(response)["code"] == "unsupported_media_type"
    response = a.api.post("/api/v1/learners", data="{not json", content_type="application/json")
    assert response.status_code == 400
    error_of(response)


def test_an_unexpected_exception_is_a_500_in_the_error_shape_without_internals(tenants, monkeypatch):
    from coaching.api import views

    def boom(**kwargs):
        raise RuntimeError("internal detail: password=hunter2")

    monkeypatch.setattr(views.selectors, "learners_for_client", boom)
    a, _ = tenants
    response = a.api.get("/api/v1/learners")
    assert response.status_code == 500
    err = error_of(response)
    assert err["code"] == "server_error"
    assert "hunter2" not in response.content.decode()


def test_message_over_the_character_limit_is_a_400_naming_the_limit(tenants, settings):
    a, _ = tenants
    url = f"/api/v1/conversations/{a.conversation.public_id}/messages"
    limit = settings.BLOOM_MAX_MESSAGE_CHARS
    for content in ("", "   ", "x" * (limit + 1), "x" * 20_000):
        response = a.api.post(url, {"content": content}, format="json")
        assert response.status_code == 400, (len(content), response.status_code)
        err = error_of(response)
        assert err["field"] == "content"
        if len(content) > limit:
            assert str(limit) in err["message"]
    from coaching.models import Message

    assert not Message.objects.filter(conversation=a.conversation, content__startswith="xxxx").exists()


def test_request_body_over_the_byte_limit_is_refused_before_parsing(tenants):
    a, _ = tenants
    with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=4096):
        response = a.api.post("/api/v1/learners", {"display_name": "y" * 10_000}, format="json")
    assert response.status_code == 413
    err = error_of(response)
    assert err["code"] == "too_large" and "4096" in err["message"]


def test_memory_bad_inputs_are_400s_in_the_error_shape(tenants):
    a, _ = tenants
    base = f"/api/v1/memory/learners/{a.learner.research_id}"
    cases = [
        ("post", f"{base}/facts", {"facts": [{"fact_type": "preference", "content": "x" * 600}]}),
        ("post", f"{base}/facts", {"facts": [{"fact_type": "gossip", "content": "likes tea"}]}),
        ("post", f"{base}/facts", {"facts": [{"fact_type": "preference", "content": "tea", "confidence": "high"}]}),
        ("get", f"{base}/search?q={'q' * 10_000}", None),
        ("get", f"{base}/search", None),
    ]
    for method, url, body in cases:
        response = getattr(a.api, method)(url, body, format="json")
        assert response.status_code == 400, (url[:80], body, response.status_code, response.content[:200])
        error_of(response)


def test_openapi_schema_generates_without_warnings():
    out, err = io.StringIO(), io.StringIO()
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", "/dev/null", stdout=out, stderr=err)
    assert "Warning" not in err.getvalue() and "Error" not in err.getvalue(), err.getvalue()


def test_swagger_ui_is_served_offline(db):
    from django.contrib.staticfiles import finders
    from rest_framework.test import APIClient

    page = APIClient().get("/api/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    urls = re.findall(r'(?:src|href)="([^"]+)"', html) + re.findall(r'"(https?://[^"]+)"', html)
    assert urls, html[:500]
    external = [u for u in urls if re.match(r"^(https?:)?//", u)]
    assert not external, f"Swagger UI must not load anything from another host: {external}"
    statics = [u for u in urls if "/static/" in u]
    assert any("swagger-ui-bundle" in u for u in statics)
    for u in statics:
        path = u.split("/static/", 1)[1].split("?")[0]
        assert finders.find(path), f"{u} is not a local static file"
    schema = APIClient().get("/api/schema/")
    assert schema.status_code == 200
