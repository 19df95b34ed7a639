"""A client manages its own bearer tokens: list, rotate, revoke.

- `GET    /api/v1/tokens`                 the calling client's tokens (prefix, dates; never a secret)
- `POST   /api/v1/tokens/rotate`          issue a new token and revoke the one used for this call
- `DELETE /api/v1/tokens/<id>`            revoke one of the client's own tokens by the `id` (a UUID)
                                          the list returns (another client's: 404)

Rotation revokes the old token IMMEDIATELY (no overlap window): the response carries the new
raw token, shown once. A client running several replicas creates a second token first
(`POST /api/v1/tokens`), rolls it out, then revokes the old one — an overlap it controls, instead
of a window during which a leaked token keeps working. Tokens are stored as sha256 hashes only.

Only API clients (Bearer auth) manage tokens; staff use the admin."""

from __future__ import annotations

from uuid import UUID

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import error_response
from core.identity.models import ApiClient, ApiToken
from core.identity.services import api_token_create, api_token_revoke, api_token_rotate


# --- API ------------------------------------------------------------------------------------------
class TokenOut(serializers.ModelSerializer):
    id = serializers.UUIDField(source="public_id", read_only=True)
    revoked = serializers.SerializerMethodField()

    class Meta:
        model = ApiToken
        fields = ("id", "name", "prefix", "created_at", "last_used_at", "revoked_at", "revoked")

    def get_revoked(self, obj: ApiToken) -> bool:
        return obj.revoked_at is not None


class TokenCreatedOut(TokenOut):
    token = serializers.CharField(help_text="The raw token. Shown once; only its hash is stored.")

    class Meta(TokenOut.Meta):
        fields = (*TokenOut.Meta.fields, "token")


class TokenNameIn(serializers.Serializer):
    name = serializers.CharField(max_length=120, required=False, allow_blank=True, default="")


def _client_only(request) -> Response | None:
    if not isinstance(request.user, ApiClient) or not isinstance(request.auth, ApiToken):
        return error_response("client_required", "Tokens are managed by an API client (Bearer token).",
                              status_code=403)
    return None


def _created(token: ApiToken, raw: str) -> dict:
    return {**TokenOut(token).data, "token": raw}


class TokenListOut(serializers.Serializer):
    results = TokenOut(many=True)


def _issue(request, make) -> Response:
    """Create (or rotate to) a token named by the request body; `make(name)` returns (token, raw)."""
    if (denied := _client_only(request)) is not None:
        return denied
    data = TokenNameIn(data=request.data)
    data.is_valid(raise_exception=True)
    token, raw = make(data.validated_data["name"])
    return Response(_created(token, raw), status=status.HTTP_201_CREATED)


class TokenListView(APIView):
    @extend_schema(responses=TokenListOut)
    def get(self, request):
        if (denied := _client_only(request)) is not None:
            return denied
        rows = ApiToken.objects.filter(client=request.user).order_by("-created_at", "-id")
        return Response({"results": TokenOut(rows, many=True).data})

    @extend_schema(request=TokenNameIn, responses={201: TokenCreatedOut})
    def post(self, request):
        return _issue(request, lambda name: api_token_create(client=request.user, name=name))


class TokenRotateView(APIView):
    @extend_schema(request=TokenNameIn, responses={201: TokenCreatedOut})
    def post(self, request):
        return _issue(request, lambda name: api_token_rotate(token=request.auth, name=name))


class TokenRevokeView(APIView):
    @extend_schema(request=None, responses={204: None})
    def delete(self, request, token_id: UUID):
        if (denied := _client_only(request)) is not None:
            return denied
        pk = ApiToken.objects.filter(public_id=token_id, client=request.user).values_list("pk", flat=True).first()
        if pk is None or api_token_revoke(client=request.user, token_id=pk) is None:
            return error_response("not_found", "Token not found.", status_code=404)
        return Response(status=status.HTTP_204_NO_CONTENT)
