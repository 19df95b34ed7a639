"""OpenAPI for drf-spectacular: the bearer-token scheme of API clients (an extension, imported in
BloomConfig.ready, so Swagger UI can authenticate and generation has no "could not resolve
authenticator" warning), the one error shape as a schema component, and the project's schema
class (REST_FRAMEWORK["DEFAULT_SCHEMA_CLASS"]).

Every operation declares its request and response bodies (`@extend_schema` or a serializer on
the view): there is no free-form fallback, and `bloom/tests/test_openapi_typed.py` fails on any
operation that is not typed. The schema class adds the error responses every operation can give
(400 bad input, 401 no/invalid token, 403 not allowed, 404 unknown id, 429 throttled) with the
error schema, so a view only declares the ones that are specific to it (409, 503…)."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "core.identity.auth.ApiTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer",
                "description": "An API client token: `Authorization: Bearer bloom_…` (stored hashed)."}


class ErrorItem(serializers.Serializer):
    code = serializers.CharField(help_text="machine-readable, e.g. invalid, not_found, throttled")
    message = serializers.CharField(help_text="one sentence for a human")
    field = serializers.CharField(allow_null=True, help_text="the input field at fault, when there is one")


class ErrorDetail(ErrorItem):
    errors = ErrorItem(many=True, help_text="every error of the request (validation may find several); the "
                                            "first is the one repeated above")


class ErrorOut(serializers.Serializer):
    """`{"error": {"code", "message", "field", "errors"}}` — every error of the API."""

    error = ErrorDetail()


COMMON_ERRORS = (400, 401, 403, 429)


class BloomAutoSchema(AutoSchema):
    def _get_response_bodies(self, direction="response"):
        # Here, not in get_response_serializers: `@extend_schema` replaces that method.
        responses = super()._get_response_bodies(direction)
        for code in (*COMMON_ERRORS, *([404] if "{" in self.path else [])):
            responses.setdefault(str(code), self._get_response_for_code(ErrorOut, str(code), direction=direction))
        return responses

    def _is_list_view(self, serializer=None) -> bool:
        # `FooListView.get` lists; without this both GET /learners and GET /learners/{id} would be
        # "retrieve" and collide in operationId.
        if self.method == "GET" and type(self.view).__name__.endswith("ListView"):
            return True
        return super()._is_list_view(serializer)

