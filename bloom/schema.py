"""OpenAPI for drf-spectacular: the bearer-token scheme of API clients (an extension, imported in
BloomConfig.ready, so Swagger UI can authenticate and generation has no "could not resolve
authenticator" warning) and the project's schema class (REST_FRAMEWORK["DEFAULT_SCHEMA_CLASS"])."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.types import OpenApiTypes
from rest_framework.generics import GenericAPIView
from rest_framework.views import APIView


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "coaching.api.auth.ApiTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer",
                "description": "An API client token: `Authorization: Bearer bloom_…` (stored hashed)."}


class BloomAutoSchema(AutoSchema):
    """The project's schema class. Views with `@extend_schema` or a serializer are described
    exactly as before. A plain APIView with neither — most views here validate with serializers
    inside the method, which drf-spectacular cannot see — is described as taking (POST/PUT/PATCH)
    and returning a free-form JSON object instead of being dropped with a warning, so the schema
    still lists every operation (and schemathesis fuzzes it). Annotating such views with
    `@extend_schema(request=…, responses=…)` replaces the fallback."""

    def _free_form(self) -> bool:
        view = self.view
        return isinstance(view, APIView) and not isinstance(view, GenericAPIView) and not any(
            callable(getattr(view, name, None)) for name in ("get_serializer", "get_serializer_class")
        ) and not hasattr(view, "serializer_class")

    def get_request_serializer(self):
        if self._free_form():
            return OpenApiTypes.OBJECT if self.method in ("POST", "PUT", "PATCH") else None
        return super().get_request_serializer()

    def get_response_serializers(self):
        if self._free_form():
            return OpenApiTypes.OBJECT
        return super().get_response_serializers()

    def _is_list_view(self, serializer=None) -> bool:
        # `FooListView.get` lists; without this both GET /learners and GET /learners/{id} would be
        # "retrieve" and collide in operationId.
        if self.method == "GET" and type(self.view).__name__.endswith("ListView"):
            return True
        return super()._is_list_view(serializer)
