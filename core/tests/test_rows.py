"""The hand-written look-ups of every API request (core.rows) return what the ORM returned: the
same field values and types (SQLite hands datetimes and UUIDs over as text), fields not selected
deferred, and nothing cached — a revoked token or a deactivated client is refused at once."""

from __future__ import annotations

import pytest

from core import rows
from core.identity.models import ApiClient, ApiToken, Learner
from core.identity.services import api_client_create, api_token_authenticate, api_token_create, api_token_revoke

pytestmark = pytest.mark.django_db


def _same(got, ref, model) -> None:
    for field in model._meta.concrete_fields:
        a, b = getattr(got, field.attname), getattr(ref, field.attname)
        assert (a, type(a)) == (b, type(b)), field.attname


def test_the_token_look_up_returns_the_orms_token_and_client_and_refuses_a_revoked_one_at_once():
    client = api_client_create(name="rows")
    token, raw = api_token_create(client=client)
    got = api_token_authenticate(raw=raw)
    ref = ApiToken.objects.select_related("client").get(pk=token.pk)
    _same(got, ref, ApiToken)
    _same(got.client, ref.client, ApiClient)
    assert api_token_authenticate(raw=raw + "x") is None
    api_token_revoke(client=client, token_id=token.pk)
    assert api_token_authenticate(raw=raw) is None


def test_a_deactivated_clients_token_is_refused():
    client = api_client_create(name="rows")
    _, raw = api_token_create(client=client)
    ApiClient.objects.filter(pk=client.pk).update(is_active=False)
    assert api_token_authenticate(raw=raw) is None


def test_an_instance_from_some_columns_in_any_order_defers_the_rest():
    learner = Learner.objects.create(client=api_client_create(name="rows"), display_name="Ana")
    got = rows.instance(Learner, ("research_id", "client_id", "id"),
                        (rows.db_value(Learner, "research_id", learner.research_id), learner.client_id, learner.pk))
    assert (got.pk, got.research_id, got.client_id) == (learner.pk, learner.research_id, learner.client_id)
    assert "display_name" in got.get_deferred_fields()
    assert got.display_name == "Ana"  # read on access, as with .only()
