"""Batch ingest endpoint: per-item outcome with fact ids, extras returned on search hits, one bad
item rejects the request and writes nothing."""

from __future__ import annotations

import pytest

from memory.models import Fact
from memory.tests import test_api

client_and_learner = test_api.client_and_learner  # the API tests' fixture: an API client and its learner

pytestmark = pytest.mark.django_db
BASE = "/api/v1/memory"


@pytest.fixture
def api_learner(client_and_learner):
    api, learner, _ = client_and_learner
    return api, learner


def test_batch_reports_each_item_and_extras_come_back_on_search(api_learner):
    api, learner = api_learner
    url = f"{BASE}/learners/{learner.research_id}/facts/batch"
    r = api.post(url, {"items": [
        {"content": "Maya: We adopted a beagle from the shelter, his name is Biscuit.",
         "occurred_at": "2025-02-01T18:00:00Z", "external_id": "t-1", "metadata": {"session": 4}},
        {"content": "Tom: I started a pottery class on Tuesdays.", "external_id": "t-2"},
        {"content": "maya: we adopted a beagle from the shelter, his name is biscuit", "external_id": "t-3"},
    ]}, format="json")
    assert r.status_code == 201, r.content
    body = r.json()
    first = body["items"][0]["fact_id"]
    assert first == str(Fact.objects.get(external_id="t-1").public_id)  # the public id, never the key
    assert [(i["index"], i["outcome"]) for i in body["items"]] == [(0, "created"), (1, "created"), (2, "duplicate")]
    assert body["items"][2]["fact_id"] == first and body["items"][2]["external_id"] == "t-3"
    assert (body["created"], body["duplicates"], body["strengthened"], body["surprises"]) == (2, 1, 0, 0)
    # A retry of the same external id is a duplicate of the fact it created, with its id.
    again = api.post(url, {"items": [{"content": "Tom: I started a pottery class on Tuesday evenings.",
                                      "external_id": "t-2"}]}, format="json").json()
    assert again["items"][0]["outcome"] == "duplicate" and again["items"][0]["fact_id"] == body["items"][1]["fact_id"]
    hits = api.get(f"{BASE}/learners/{learner.research_id}/search", {"q": "what dog did Maya get?"}).json()["results"]
    top = hits[0]
    assert top["fact_id"] == first
    assert (top["external_id"], top["metadata"], top["occurred_at"]) == ("t-1", {"session": 4},
                                                                         "2025-02-01T18:00:00+00:00")


@pytest.mark.parametrize(("item", "field"), [
    ({"content": "ok", "occurred_at": "last tuesday"}, "occurred_at"),
    ({"content": "ok", "metadata": "not an object"}, "metadata"),
    ({"content": "ok", "external_id": "x" * 201}, "external_id"),
    ({"content": "x" * 501}, "content"),
    ({"content": "ok", "fact_type": "mood"}, "fact_type"),
])
def test_one_bad_item_is_a_400_naming_it_and_nothing_is_written(api_learner, item, field):
    api, learner = api_learner
    r = api.post(f"{BASE}/learners/{learner.research_id}/facts/batch",
                 {"items": [{"content": "Tom: a fine first item."}, item]}, format="json")
    assert r.status_code == 400, r.content
    err = r.json()["error"]
    assert "items" in err["field"] and field in err["field"]
    assert not Fact.objects.exists()


def test_batch_needs_items_and_the_callers_learner(api_learner, make_learner):
    api, learner = api_learner
    assert api.post(f"{BASE}/learners/{learner.research_id}/facts/batch", {"items": []},
                    format="json").status_code == 400
    stranger = make_learner()
    r = api.post(f"{BASE}/learners/{stranger.research_id}/facts/batch", {"items": [{"content": "hi"}]},
                 format="json")
    assert r.status_code == 404 and not Fact.objects.exists()


@pytest.mark.parametrize("value", [
    [0.25, -1.0, 3.5], [1, 2.5, -3], ["1.5", 2.0], [float("nan"), 1.0], [float("inf")], [None, 1.0], [],
    "0.1,0.2", [True, 1.0], [10 ** 400], {"a": 1.0},
])
def test_embedding_field_takes_numbers_in_one_pass_and_everything_else_as_before(value):
    """The one-pass EmbeddingField gives what DRF's ListField of FloatField gives: the same floats,
    or the same errors."""
    from rest_framework import serializers

    from memory.api.batch import EmbeddingField

    def outcome(field):
        try:
            return "ok", field.run_validation(value)
        except serializers.ValidationError as exc:
            return "error", exc.detail
        except Exception as exc:
            return "raised", type(exc)

    reference = serializers.ListField(child=serializers.FloatField(), allow_empty=False)
    fast = EmbeddingField(allow_empty=False)
    assert outcome(fast) == outcome(reference)
    kind, values = outcome(fast)
    if kind == "ok":
        assert all(type(x) is float for x in values)
