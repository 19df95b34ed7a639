"""The OpenAPI schema types every operation, so a client can be generated from it.

An operation is *untyped* when a body it takes (PATCH/PUT always, POST when it has one) or a 2xx
body it returns is missing or a free-form object, when it documents no error response, or when
an error response is not the project's error shape. `untyped_operations` is also the counter
quoted in the README (run it on any schema: `python -m bloom.tests.test_openapi_typed <file>`)."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

METHODS = ("get", "post", "put", "patch", "delete")


def _resolve(node: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = components[node["$ref"].rsplit("/", 1)[1]]
    return node


def typed(node: dict[str, Any] | None, components: dict[str, Any]) -> bool:
    """A schema a generator can turn into a type: an object with properties (or a typed map), a
    scalar, an array of typed items, or a composition."""
    if not node:
        return False
    node = _resolve(node, components)
    if any(k in node for k in ("allOf", "oneOf", "anyOf", "enum")):
        return True
    kind = node.get("type")
    if kind == "array":
        return typed(node.get("items"), components)
    if kind == "object" or "properties" in node:
        extra = node.get("additionalProperties")
        return bool(node.get("properties")) or (isinstance(extra, dict) and typed(extra, components))
    return kind in ("string", "integer", "number", "boolean")


def _bodies(obj: dict[str, Any]) -> list[dict[str, Any] | None]:
    content = obj.get("content") or {}
    return [media.get("schema") for media in content.values()] or [None]


def untyped_operations(schema: dict[str, Any]) -> list[str]:
    components = schema.get("components", {}).get("schemas", {})
    error_ref = "#/components/schemas/ErrorOut"
    out: list[str] = []
    for path, item in schema.get("paths", {}).items():
        for method in METHODS:
            op = item.get(method)
            if op is None:
                continue
            where, reasons = f"{method.upper()} {path}", []
            body = op.get("requestBody")
            if method in ("put", "patch") and body is None:
                reasons.append("no request body")
            if body is not None and not all(typed(s, components) for s in _bodies(body)):
                reasons.append("free-form request body")
            responses = op.get("responses", {})
            ok = {c: r for c, r in responses.items() if c.startswith("2")}
            if not ok:
                reasons.append("no 2xx response")
            for code, response in ok.items():
                if code != "204" and not all(typed(s, components) for s in _bodies(response)):
                    reasons.append(f"{code} response untyped")
            errors = {c: r for c, r in responses.items() if c.startswith(("4", "5"))}
            if not errors:
                reasons.append("no error responses")
            for code, response in errors.items():
                schemas = _bodies(response)
                if not all(s and (s.get("$ref") == error_ref or typed(s, components)) for s in schemas):
                    reasons.append(f"{code} error untyped")
            for param in op.get("parameters", []):
                if not typed(param.get("schema"), components):
                    reasons.append(f"parameter {param.get('name')} untyped")
            if reasons:
                out.append(f"{where}: {', '.join(reasons)}")
    return out


def operations(schema: dict[str, Any]) -> int:
    return sum(1 for item in schema.get("paths", {}).values() for m in METHODS if m in item)


@pytest.fixture(scope="module")
def api_schema() -> dict[str, Any]:
    from drf_spectacular.generators import SchemaGenerator

    return json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True), default=str))


def test_every_operation_is_typed(api_schema):
    untyped = untyped_operations(api_schema)
    assert operations(api_schema) >= 30
    assert untyped == [], "\n".join(untyped)


def test_the_counter_sees_a_free_form_operation():
    # The test above can fail: a free-form body, a missing error response, an untyped 200.
    schema = {"paths": {"/x": {
        "post": {"requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}},
                 "responses": {"200": {"content": {"application/json": {"schema": {"type": "object"}}}}}},
        "get": {"responses": {"200": {"description": "No response body"},
                              "404": {"content": {"application/json": {"schema": {"$ref":
                                                                                  "#/components/schemas/ErrorOut"}}}}}},
    }}, "components": {"schemas": {"ErrorOut": {"type": "object", "properties": {"error": {"type": "object"}}}}}}
    found = untyped_operations(schema)
    assert found == ["GET /x: 200 response untyped",
                     "POST /x: free-form request body, 200 response untyped, no error responses"]


def test_list_responses_are_paginated_with_next_and_previous(api_schema):
    components = api_schema["components"]["schemas"]
    for path in ("/api/v1/memory/learners/{research_id}/facts", "/api/v1/learners/{research_id}/sessions"):
        ref = api_schema["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
        page = _resolve(ref, components)
        assert {"count", "next", "previous", "results"} <= set(page["properties"]), path
        names = {p["name"] for p in api_schema["paths"][path]["get"]["parameters"]}
        assert {"limit", "offset"} <= names, path


def test_query_parameters_of_the_memory_filters_are_documented(api_schema):
    params = {p["name"] for p in api_schema["paths"]["/api/v1/memory/learners/{research_id}/search"]["get"]
              ["parameters"]}
    assert {"q", "limit", "fact_type", "tier", "surprise", "include_superseded", "created_after",
            "accessed_before", "source_agent", "conversation"} <= params


if __name__ == "__main__":  # count on a saved schema: python -m bloom.tests.test_openapi_typed schema.json
    loaded = json.load(open(sys.argv[1]))  # noqa: SIM115
    bad = untyped_operations(loaded)
    print("\n".join(bad))
    print(f"{len(bad)} untyped of {operations(loaded)} operations")
