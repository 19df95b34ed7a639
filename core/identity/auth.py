"""Bearer-token authentication for API clients: `Authorization: Bearer <token>`. Tokens are
stored as sha256 hashes (core.identity.models.ApiToken); `request.user` becomes the ApiClient and
`request.auth` the ApiToken row."""

from __future__ import annotations

from rest_framework import authentication, exceptions

from core.identity.services import api_token_authenticate


class ApiTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        parts = header.split()
        if parts[0] != self.keyword:
            return None  # another scheme: let other authenticators try
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("Authorization header must be 'Bearer <token>'.")
        token = api_token_authenticate(raw=parts[1])
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        return token.client, token

    def authenticate_header(self, request) -> str:
        return self.keyword
