"""No integer database key in the API, read off the schema the API serves (`/api/schema/`): no path
parameter is an integer, and no response field that names a row is one: messages too are named by
their public UUID (docs/api.md). A new route or field with an integer key fails here until it is a
UUID; there is no list of exceptions."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

METHODS = ("get", "post", "put", "patch", "delete")
# Path parameters that are not row ids: a telemetry trace id (a string the caller made) and the
# ICS feed's secret token.
NOT_ROW_IDS = {"trace_id", "token"}
# Field names that, typed integer, would be a row's key.
REFERENCE_NAMES = {"id", "by", "replaces", "merged", "summary", "superseded_by", "conflicts_with", "reply_to",
                   "reply", "message", "learner_message", "baseline", "candidate", "learner", "conversation",
                   "session", "fact", "run", "study"}


@pytest.fixture(scope="module")
def served_schema(django_db_blocker) -> dict[str, Any]:
    with django_db_blocker.unblock():
        response = APIClient().get("/api/schema/", {"format": "json"})
    assert response.status_code == 200, response.content[:300]
    return response.json()


def integer_path_parameters(schema: dict[str, Any]) -> tuple[list[str], int]:
    """(`METHOD /path {name}` of every path parameter that is not a UUID and of every query
    parameter that names a row with an integer, number of path parameters checked)."""
    bad, checked = [], 0
    for path, item in schema.get("paths", {}).items():
        shared = item.get("parameters", [])
        for method in METHODS:
            if method not in item:
                continue
            for param in [*shared, *item[method].get("parameters", [])]:
                kind = param.get("schema", {})
                if param.get("in") == "query" and kind.get("type") == "integer" and (
                        param["name"] in REFERENCE_NAMES or param["name"].endswith("_id")):
                    bad.append(f"{method.upper()} {path} ?{param['name']}: {kind}")
                if param.get("in") != "path":
                    continue
                checked += 1
                if kind.get("type") == "integer" or (param["name"] not in NOT_ROW_IDS
                                                     and kind.get("format") != "uuid"):
                    bad.append(f"{method.upper()} {path} {{{param['name']}}}: {kind}")
    return bad, checked


def integer_references(schema: dict[str, Any]) -> list[str]:
    """`Component.field` of every response field that names a row and is typed integer."""
    components = schema.get("components", {}).get("schemas", {})
    found = []
    for name, component in components.items():
        for field, prop in (component.get("properties") or {}).items():
            looks_like_id = field in REFERENCE_NAMES or field.endswith("_id")
            if looks_like_id and prop.get("type") == "integer":
                found.append(f"{name}.{field}")
            # A list of keys (the calendar import's session_ids once was one).
            looks_like_ids = field.endswith("_ids") or field.rstrip("s") in REFERENCE_NAMES
            if looks_like_ids and prop.get("type") == "array" and (prop.get("items") or {}).get("type") == "integer":
                found.append(f"{name}.{field}[]")
    return sorted(found)


def test_no_path_parameter_is_an_integer(served_schema):
    bad, checked = integer_path_parameters(served_schema)
    assert checked >= 30, checked  # every route with an id was looked at
    assert bad == [], "\n".join(bad)


def test_no_response_field_is_an_integer_key(served_schema):
    assert integer_references(served_schema) == []


def test_message_ids_are_uuids(served_schema):
    """The fields that used to carry a message's integer key, each still there and a UUID (so the
    walk above is not green because a field was renamed away)."""
    components = served_schema["components"]["schemas"]
    fields = ["MessageOut.id", "MessageOut.reply_to", "StreamFinalData.message_id", "StreamFinalData.reply_to",
              "StreamErrorData.message_id", "StreamUnavailableData.message_id", "TurnUnavailableDetail.message_id",
              "CheckInOut.message", "CheckInCreatedOut.message", "TurnOut.learner_message", "TurnOut.reply",
              "FactOutput.source_message_id", "FactDetail.source_message_id", "SearchSource.message_id"]
    kinds = {f: components[f.split(".")[0]]["properties"][f.split(".")[1]] for f in fields}
    assert {f: (k.get("type"), k.get("format")) for f, k in kinds.items()} == dict.fromkeys(fields, ("string", "uuid"))


def test_the_walks_see_an_integer_key():
    schema = {"paths": {"/api/v1/evaluation/runs/{run_id}/export": {"get": {"parameters": [
        {"in": "path", "name": "run_id", "schema": {"type": "integer"}}]}}},
        "components": {"schemas": {"Run": {"properties": {"id": {"type": "integer"}, "runs": {"type": "integer"}},
                                           "type": "object"}}}}
    assert integer_path_parameters(schema) == (
        ["GET /api/v1/evaluation/runs/{run_id}/export {run_id}: {'type': 'integer'}"], 1)
    assert integer_references(schema) == ["Run.id"]
