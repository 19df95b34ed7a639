"""Access control, tested: hashed tokens, rotation and revocation, per-client throttling, CSRF and
CORS, staff-only endpoints, and the object-level isolation matrix over every /api/v1/ URL."""

from __future__ import annotations

import hashlib
import uuid

import pytest
from django.core.cache import cache
from django.test import override_settings
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.test import APIClient

from bloom.tests.reliability.conftest import MARKER, error_of

pytestmark = pytest.mark.django_db


# --- tokens -----------------------------------------------------------------------------------------
def test_tokens_are_stored_as_sha256_only(tenants):
    from coaching.models import ApiToken

    a, _ = tenants
    row = ApiToken.objects.get(pk=a.token.pk)
    assert row.key_hash == hashlib.sha256(a.raw.encode()).hexdigest()
    stored = [str(v) for v in ApiToken.objects.values_list("name", "prefix", "key_hash").get(pk=row.pk)]
    assert all(a.raw not in v for v in stored), "the raw token must not be stored in any column"
    assert len(row.prefix) < len(a.raw) // 2  # the prefix identifies, it does not authenticate


def test_rotation_issues_a_new_token_and_revokes_the_old_immediately(tenants):
    a, _ = tenants
    assert a.api.get("/api/v1/learners").status_code == 200
    rotated = a.api.post("/api/v1/tokens/rotate", {"name": "rotated"}, format="json")
    assert rotated.status_code == 201, rotated.content
    new_raw = rotated.json()["token"]
    assert new_raw != a.raw
    old = a.api.get("/api/v1/learners")
    assert old.status_code == 401
    assert error_of(old)["code"] == "authentication_failed"
    fresh = APIClient()
    fresh.credentials(HTTP_AUTHORIZATION=f"Bearer {new_raw}")
    assert fresh.get("/api/v1/learners").status_code == 200
    listing = fresh.get("/api/v1/tokens").json()["results"]
    by_id = {t["id"]: t for t in listing}
    assert by_id[str(a.token.public_id)]["revoked"] is True
    assert all("token" not in t and "key_hash" not in t for t in listing), "a listing never shows a secret"


def test_revocation_of_own_token_and_not_of_another_clients(tenants):
    a, b = tenants
    created = a.api.post("/api/v1/tokens", {"name": "ci"}, format="json")
    assert created.status_code == 201
    second = APIClient()
    second.credentials(HTTP_AUTHORIZATION=f"Bearer {created.json()['token']}")
    assert second.get("/api/v1/learners").status_code == 200
    assert a.api.delete(f"/api/v1/tokens/{created.json()['id']}").status_code == 204
    assert second.get("/api/v1/learners").status_code == 401
    # Another client's token: not found, and it keeps working.
    response = a.api.delete(f"/api/v1/tokens/{b.token.public_id}")
    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"
    # Its integer key is no route at all (the same 404).
    response = a.api.delete(f"/api/v1/tokens/{b.token.pk}")
    assert response.status_code == 404 and error_of(response)["code"] == "not_found"
    assert b.api.get("/api/v1/learners").status_code == 200


def test_staff_session_cannot_mint_client_tokens(tenants, staff):
    response = staff.post("/api/v1/tokens/rotate", {}, format="json")
    assert response.status_code == 403
    assert error_of(response)["code"] == "client_required"


def test_missing_and_malformed_credentials_get_401_in_the_error_shape(db):
    anon = APIClient()
    for headers in ({}, {"HTTP_AUTHORIZATION": "Bearer"}, {"HTTP_AUTHORIZATION": "Bearer a b"},
                    {"HTTP_AUTHORIZATION": "Bearer bloom_" + "x" * 43}):
        response = anon.get("/api/v1/learners", **headers)
        assert response.status_code == 401, (headers, response.status_code)
        error_of(response)


# --- throttling ---------------------------------------------------------------------------------------
def test_throttling_is_per_client_and_survives_token_rotation(tenants):
    a, b = tenants
    cache.clear()
    rest = {"DEFAULT_THROTTLE_CLASSES": ["core.throttling.ClientRateThrottle"],
            "DEFAULT_THROTTLE_RATES": {"client": "3/min"}}
    from django.conf import settings

    with override_settings(REST_FRAMEWORK={**settings.REST_FRAMEWORK, **rest}):
        for _ in range(2):
            assert a.api.get("/api/v1/learners").status_code == 200
        rotated = a.api.post("/api/v1/tokens/rotate", {}, format="json")  # the 3rd request
        assert rotated.status_code == 201
        fresh = APIClient()
        fresh.credentials(HTTP_AUTHORIZATION=f"Bearer {rotated.json()['token']}")
        throttled = fresh.get("/api/v1/learners")
        assert throttled.status_code == 429, "a new token of the same client shares the budget"
        assert int(throttled["Retry-After"]) > 0
        assert error_of(throttled)["code"] == "throttled"
        assert b.api.get("/api/v1/learners").status_code == 200, "another client has its own budget"
    cache.clear()


# --- CSRF and CORS ------------------------------------------------------------------------------------
def test_session_authenticated_posts_need_csrf_but_bearer_posts_do_not(tenants):
    from django.contrib.auth import get_user_model

    a, _ = tenants
    url = f"/api/v1/learners/{a.learner.research_id}/conversations"
    user = get_user_model().objects.create_user("csrf-staff", password="pw-123456789", is_staff=True)
    browser = APIClient(enforce_csrf_checks=True)
    browser.force_login(user)
    refused = browser.post(url, {}, format="json")
    assert refused.status_code == 403
    assert "CSRF" in error_of(refused)["message"]
    browser.get("/admin/")  # a page with a form: sets the csrftoken cookie
    token = browser.cookies["csrftoken"].value
    assert browser.post(url, {}, format="json", HTTP_X_CSRFTOKEN=token).status_code == 201

    bearer = APIClient(enforce_csrf_checks=True)
    bearer.credentials(HTTP_AUTHORIZATION=f"Bearer {a.raw}")
    assert bearer.post(url, {}, format="json").status_code == 201, "the token API is not cookie-authenticated"


@override_settings(CORS_ALLOWED_ORIGINS=["https://app.example"])
def test_cors_only_for_configured_origins_and_only_on_the_api(db):
    anon = APIClient()
    preflight = {"HTTP_ACCESS_CONTROL_REQUEST_METHOD": "POST"}
    ok = anon.options("/api/v1/learners", HTTP_ORIGIN="https://app.example", **preflight)
    assert ok["Access-Control-Allow-Origin"] == "https://app.example"
    evil = anon.options("/api/v1/learners", HTTP_ORIGIN="https://evil.example", **preflight)
    assert "Access-Control-Allow-Origin" not in evil
    admin = anon.options("/admin/login/", HTTP_ORIGIN="https://app.example", **preflight)
    assert "Access-Control-Allow-Origin" not in admin
    assert "Access-Control-Allow-Credentials" not in ok, "no cookies cross origins"


# --- staff-only endpoints -------------------------------------------------------------------------------
def _staff_only_urls(tenants) -> list[str]:
    from coaching.research.models import Study
    from evaluation.models import EvalRun, EvalSet

    a, _ = tenants
    study = Study.objects.create(name="rel-study", start_date="2026-01-05")
    run = EvalRun.objects.create(eval_set=EvalSet.objects.create(name="rel-set"))
    return [
        "/api/v1/telemetry/calls", "/api/v1/telemetry/aggregates", f"/api/v1/telemetry/traces/{a.turn.trace_id}",
        f"/api/v1/research/studies/{study.public_id}/export", "/api/v1/research/codebook",
        f"/api/v1/evaluation/runs/{run.public_id}/export", "/api/v1/memory/search?q=swim",
    ]


def test_staff_only_endpoints_reject_api_clients(tenants):
    a, _ = tenants
    for url in _staff_only_urls(tenants):
        response = a.api.get(url)
        assert response.status_code == 403, (url, response.status_code)
        error_of(response)
    reset = a.api.post("/api/v1/telemetry/reset", {"confirm": True}, format="json")
    assert reset.status_code == 403
    error_of(reset)


def test_staff_only_endpoints_answer_staff(tenants, staff):
    # The other half of the evidence: the same URLs do work, for staff.
    from django.contrib.auth import get_user_model

    get_user_model().objects.filter(username="rel-staff").update(is_superuser=True)
    for url in _staff_only_urls(tenants):
        if "/traces/" in url:
            continue  # no model call was recorded for the fixture's hand-made turn
        response = staff.get(url)
        assert response.status_code == 200, (url, response.status_code, response.content[:300])


# --- the isolation matrix -----------------------------------------------------------------------------
# Every path parameter an /api/v1/ URL may take, mapped to ANOTHER client's object. A new URL with
# a parameter not listed here fails the matrix until someone says what it points at.
def _fillers(b, extra) -> dict[str, str]:
    return {
        "research_id": str(b.learner.research_id),
        "conversation_id": str(b.conversation.public_id), "fact_id": str(b.fact.public_id),
        "token_id": str(b.token.public_id), "trace_id": b.turn.trace_id, "study_id": str(extra["study"].public_id),
        "run_id": str(extra["run"].public_id), "session_id": str(b.session.public_id),
    }


# Capability URLs authenticate by the secret in the path itself (an ICS feed for calendar apps,
# which cannot send headers). There is no "other client's id" to try: a wrong secret must 404.
CAPABILITY_PARAMS = {"token"}
WRITE_BODY = {"content": "hello", "display_name": "x", "text": "I like swimming in the morning",
              "fact_type": "preference", "confirm": True, "name": "n", "primary_goal": "swim",
              "ics": "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n", "outcome": "skipped",
              "start": "2030-01-07T09:00:00Z", "duration_minutes": 30, "topic": "t", "superseded_by": 1}


def api_v1_patterns() -> list[tuple[str, object, list[str]]]:
    """(route, view callback, parameter names) of every URL under api/v1/, from the resolver."""
    out: list[tuple[str, object, list[str]]] = []

    def walk(patterns, prefix: str):
        for p in patterns:
            route = prefix + str(p.pattern)
            if isinstance(p, URLResolver):
                walk(p.url_patterns, route)
            elif isinstance(p, URLPattern):
                out.append((route, p.callback, list(p.pattern.converters)))

    walk(get_resolver().url_patterns, "")
    return [(r, cb, params) for r, cb, params in out if r.startswith("api/v1/")]


def _methods(callback) -> list[str]:
    view = getattr(callback, "view_class", None) or getattr(callback, "cls", None)
    if view is None:  # a function view: try what it may accept
        return ["get", "post"]
    return [m for m in ("get", "post", "put", "patch", "delete") if hasattr(view, m)]


def _fill(route: str, values: dict[str, str]) -> str:
    import re

    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: values[m.group(1)], route)


def test_the_matrix_sees_every_api_url():
    routes = [r for r, _, _ in api_v1_patterns()]
    assert len(routes) >= 15, routes
    for expected in ("conversations/<uuid:conversation_id>/messages", "memory/facts/<uuid:fact_id>",
                     "tokens/<uuid:token_id>", "sessions/<uuid:session_id>",
                     "memory/learners/<uuid:research_id>/facts"):
        assert any(r.endswith(expected) for r in routes), expected


# Client-facing ids: a UUID in every URL; the integer key is never a route.
PUBLIC_ID_PARAMS = {"conversation_id": "conversation", "session_id": "session", "fact_id": "fact",
                    "token_id": "token", "run_id": "run", "study_id": "study"}


def _staff_objects():
    """An evaluation run and a study: staff resources, addressed by UUID like the client ones."""
    from coaching.research.models import Study
    from evaluation.models import EvalRun, EvalSet

    return {"study": Study.objects.create(name="id-study", start_date="2026-01-05"),
            "run": EvalRun.objects.create(eval_set=EvalSet.objects.create(name="id-set"))}


def test_client_urls_take_public_uuids_only():
    for route, _, params in api_v1_patterns():
        for param in set(params) & {*PUBLIC_ID_PARAMS, "research_id"}:
            assert f"<uuid:{param}>" in route, route


def test_integer_and_malformed_ids_are_a_404_in_the_error_shape(tenants):
    """With the caller's OWN objects: their integer keys, or a malformed id, find nothing."""
    a, _ = tenants
    own = {**{name: getattr(a, name) for name in ("conversation", "session", "fact", "token")}, **_staff_objects()}
    checked = 0
    for route, callback, params in api_v1_patterns():
        wanted = set(params) & set(PUBLIC_ID_PARAMS)
        if not wanted:
            continue
        for bad in ("pk", "not-a-uuid"):
            values = {"research_id": str(a.learner.research_id),
                      **{p: str(own[PUBLIC_ID_PARAMS[p]].pk) if bad == "pk" else bad for p in wanted}}
            url = _fill(route, values)
            for method in _methods(callback):
                response = getattr(a.api, method)(url, WRITE_BODY if method in ("post", "patch") else None,
                                                  format="json")
                assert response.status_code == 404, (method, url, response.status_code)
                error = error_of(response)
                assert error["code"] == "not_found" and "UUID" in error["message"], (url, error)
                checked += 1
    assert checked >= 20


def test_isolation_matrix_every_endpoint_with_another_clients_ids(tenants):
    from coaching.models import ApiToken, CheckIn, Message, PlannedSession
    from coaching.research.models import CalendarFeed, Study
    from evaluation.models import EvalRun, EvalSet
    from memory.models import Fact

    a, b = tenants
    extra = {"study": Study.objects.create(name="iso-study", start_date="2026-01-05"),
             "run": EvalRun.objects.create(eval_set=EvalSet.objects.create(name="iso-set"))}
    values = _fillers(b, extra)
    def state():
        return (Message.objects.filter(conversation__learner=b.learner).count(),
                list(Fact.objects.filter(learner=b.learner).values_list("content", "fact_type", "superseded_by")),
                list(PlannedSession.objects.filter(plan__learner=b.learner)
                     .values_list("planned_start", "status", "duration_minutes", "topic")),
                CheckIn.objects.filter(learner=b.learner).count())

    before = state()
    calls, leaks = 0, []
    for route, callback, params in api_v1_patterns():
        unknown = set(params) - set(values) - CAPABILITY_PARAMS
        assert not unknown, f"{route}: no cross-client value for {unknown}; add it to the isolation matrix"
        if set(params) & CAPABILITY_PARAMS:
            url = _fill(route, {**values, **{p: uuid.uuid4().hex for p in CAPABILITY_PARAMS}})
            response = a.api.get(url)
            calls += 1
            if response.status_code != 404:
                leaks.append((url, "GET", response.status_code))
            continue
        url = _fill(route, values)
        for method in _methods(callback):
            response = getattr(a.api, method)(url, WRITE_BODY if method in ("post", "put", "patch") else None,
                                              format="json")
            calls += 1
            if response.status_code == 201 and "token" in response.json():
                # tokens/rotate rotated A's own token (allowed): carry on with the new one.
                a.api.credentials(HTTP_AUTHORIZATION=f"Bearer {response.json()['token']}")
            body = response.content.decode(errors="replace") if not getattr(response, "streaming", False) else ""
            # With another client's ids: 403/404 only. Without ids (lists, own tokens): no 5xx,
            # and (below) nothing of the other client's in the body.
            refused = response.status_code in (403, 404) if params else response.status_code < 500
            if not refused:
                leaks.append((url, method.upper(), response.status_code))
            if MARKER in body:
                leaks.append((url, method.upper(), "response contains the other client's data"))
    assert calls >= 20
    assert not leaks, f"cross-client access: {leaks}"
    assert before == state(), "another client's data changed"
    assert ApiToken.objects.get(pk=b.token.pk).revoked_at is None
    assert not CalendarFeed.objects.filter(learner=b.learner).exists()
