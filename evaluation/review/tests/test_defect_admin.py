import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from coaching.models import Turn
from evaluation.models import Transcript
from evaluation.review.models import DefectTag, DefectTagHistory
from evaluation.review.services import defect_tag_create
from evaluation.review.tests import factories

pytestmark = pytest.mark.django_db


def _tags(n_conversations=2):
    tags = []
    for _ in range(n_conversations):
        conversation = factories.conversation_with_turns(2)
        for turn in Turn.objects.filter(learner_message__conversation=conversation):
            tags.append(defect_tag_create(turn_id=turn.pk, category="routing_override", layer="architecture"))
    return tags


def test_send_tagged_turns_to_eval_set_in_one_action(client, auditor):
    tags = _tags()
    client.force_login(auditor)
    response = client.post(reverse("admin:review_defecttag_changelist"),
                           {"action": "send_to_eval_set", "_selected_action": [t.pk for t in tags]}, follow=True)
    assert response.status_code == 200
    assert "frozen into evaluation set" in response.content.decode()
    assert Transcript.objects.filter(tags__contains=["defect-review"]).count() == 2
    assert not DefectTag.objects.filter(transcript__isnull=True).exists()


def test_send_action_needs_the_transcript_permission(client, roles):
    tags = _tags(1)
    viewer = factories.user()
    from django.contrib.auth.models import Permission

    viewer.user_permissions.add(Permission.objects.get(codename="view_defecttag"))
    client.force_login(viewer)
    html = client.get(reverse("admin:review_defecttag_changelist")).content.decode()
    assert "send_to_eval_set" not in html
    client.post(reverse("admin:review_defecttag_changelist"),
                {"action": "send_to_eval_set", "_selected_action": [t.pk for t in tags]})
    assert not DefectTag.objects.filter(transcript__isnull=False).exists()


def test_report_page_groups_by_category_and_layer(client, auditor, django_assert_max_num_queries):
    tags = _tags()
    DefectTag.objects.filter(pk=tags[0].pk).update(created_at=timezone.now() - dt.timedelta(weeks=3))
    defect_tag_create(turn_id=tags[0].turn_id, category="verbosity", layer="prompt")
    client.force_login(auditor)
    url = reverse("admin:review_defecttag_report")
    with django_assert_max_num_queries(6):
        response = client.get(url)
    html = response.content.decode()
    assert response.status_code == 200
    assert "<svg" in html and 'class="defect-chart"' in html
    assert "5 defect tags in the last 12 weeks" in html
    assert ">Routing override</a>" in html and ">Verbosity</a>" in html
    assert client.get(url, {"weeks": "nonsense"}).status_code == 200


def test_tags_are_read_only_in_the_admin_and_delete_leaves_history(client, auditor, superuser):
    tag = _tags(1)[0]
    client.force_login(auditor)
    assert client.get(reverse("admin:review_defecttag_add")).status_code == 403
    assert client.post(reverse("admin:review_defecttag_delete", args=[tag.pk]), {"post": "yes"}).status_code == 403
    client.force_login(superuser)
    response = client.post(reverse("admin:review_defecttag_delete", args=[tag.pk]), {"post": "yes"})
    assert response.status_code == 302
    assert not DefectTag.objects.filter(pk=tag.pk).exists()
    assert DefectTagHistory.objects.filter(tag_pk=tag.pk, action="deleted").exists()
