"""Writes for API clients and their bearer tokens (`<noun>_<verb>`, keyword-only, atomic). Raw tokens
are never stored: only their sha256 (`hash_token`); the raw value is returned once, at creation."""

from __future__ import annotations

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from core import rows, statements
from core.identity.models import ApiClient, ApiToken, hash_token


@transaction.atomic
def api_client_create(*, name: str, owner=None) -> ApiClient:
    return ApiClient.objects.create(name=name, owner=owner)


@transaction.atomic
def api_token_create(*, client: ApiClient, name: str = "") -> tuple[ApiToken, str]:
    """Returns (token row, raw token). The raw value is never stored: show it once."""
    raw = ApiToken.generate_raw()
    token = ApiToken.objects.create(client=client, name=name, prefix=raw[:12], key_hash=hash_token(raw))
    return token, raw


# Every API request runs this look-up; its statement is written once rather than compiled by the ORM
# per request (core.rows; memory/README.md "The HTTP path, seventh round"). Nothing is cached: a
# revoked token or a deactivated client is refused by the next request.
_TOKEN_FIELDS = ("id", "client_id", "public_id", "name", "prefix", "key_hash", "created_at", "last_used_at",
                 "revoked_at")
_CLIENT_FIELDS = ("id", "name", "owner_id", "is_active", "created_at")  # a field left out would be deferred
_AUTHENTICATE_SQL = """
SELECT t.id, t.client_id, t.public_id, t.name, t.prefix, t.key_hash, t.created_at, t.last_used_at, t.revoked_at,
       c.id, c.name, c.owner_id, c.is_active, c.created_at
FROM coaching_apitoken t JOIN coaching_apiclient c ON c.id = t.client_id
WHERE t.key_hash = %s AND t.revoked_at IS NULL AND c.is_active = %s
"""


def api_token_authenticate(*, raw: str) -> ApiToken | None:
    """The live token behind a raw Bearer value, its client attached (`token.client`), or None."""
    _, found = statements.fetch_rows(_AUTHENTICATE_SQL, [hash_token(raw), True])  # key_hash is unique
    if not found:
        return None
    row = found[0]
    token = rows.instance(ApiToken, _TOKEN_FIELDS, row[:len(_TOKEN_FIELDS)])
    token.client = rows.instance(ApiClient, _CLIENT_FIELDS, row[len(_TOKEN_FIELDS):])
    now = timezone.now()
    # Throttle the write: last_used_at to the minute is enough for audits.
    if token.last_used_at is None or now - token.last_used_at > timedelta(minutes=1):
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


@transaction.atomic
def api_token_rotate(*, token: ApiToken, name: str = "") -> tuple[ApiToken, str]:
    """New token for the same client; the old one is revoked in the same transaction."""
    old = ApiToken.objects.select_for_update().get(pk=token.pk)
    new, raw = api_token_create(client=old.client, name=name or old.name)
    if old.revoked_at is None:
        old.revoked_at = timezone.now()
        old.save(update_fields=["revoked_at"])
    return new, raw


@transaction.atomic
def api_token_revoke(*, client: ApiClient, token_id: int) -> ApiToken | None:
    token = ApiToken.objects.select_for_update().filter(pk=token_id, client=client).first()
    if token is not None and token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token
