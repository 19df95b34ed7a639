"""A chat page a learner can open: a signed, expiring link issued by the learner's API client.
No login; that learner's conversation only; replies stream; revocation and expiry end it.
Replies come from the scripted FAKE model (control flow of the page, not language)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.core import signing
from django.test import Client
from django.utils import timezone

from coaching import services
from coaching.models import CHAT_LINK_SALT, ChatLink, Message
from coaching.tests.conftest import make_client, onboarded_learner
from core.llm.providers.fake import Scripted

pytestmark = pytest.mark.django_db


@pytest.fixture
def linked(api):
    client, http = api
    learner = onboarded_learner(client)
    services.conversation_start(learner=learner)
    r = http.post(f"/api/v1/learners/{learner.research_id}/chat-link", {"expires_in_minutes": 60}, format="json")
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["url"].startswith("http://testserver/chat/l/")
    assert timedelta(minutes=59) < (datetime.fromisoformat(body["expires_at"]) - timezone.now()) \
        <= timedelta(minutes=60)
    return http, learner, body["url"].removeprefix("http://testserver")


@pytest.mark.django_db(transaction=True)  # the streamed turn runs in a thread: it must see committed rows
def test_the_link_opens_that_learners_page_without_login_and_answers(linked, fake_model):
    _, learner, path = linked
    other = onboarded_learner(make_client("other-client")[0])
    Message.objects.create(conversation=services.conversation_start(learner=other), role="learner",
                           content="someone else's words")
    browser = Client()
    page = browser.get(path)
    assert page.status_code == 200
    html = page.content.decode()
    assert "Your coach" in html and "someone else" not in html and "/admin/" not in html
    assert page["Referrer-Policy"] == "no-referrer" and page["Cache-Control"] == "no-store"

    fake_model.default = lambda request: Scripted(text="Nice work, keep the streak going.")
    sent = browser.post(path + "send", {"content": "I studied today"}, content_type="application/json")
    assert sent.status_code == 201, sent.content
    assert sent.json()["reply"]["content"]
    assert Message.objects.filter(conversation__learner=learner, content="I studied today").exists()
    streamed = browser.post(path + "send", {"content": "what next?"}, content_type="application/json",
                            HTTP_ACCEPT="text/event-stream")
    assert streamed.status_code == 200 and streamed["Content-Type"].startswith("text/event-stream")
    frames = b"".join(streamed.streaming_content).decode()
    assert "event: final" in frames
    listing = browser.get(path + "messages").content.decode()
    assert "I studied today" in listing and "what next?" in listing


def test_revoked_expired_and_forged_links_open_nothing(linked, fake_model):
    http, learner, path = linked
    token = path.removeprefix("/chat/l/").rstrip("/")
    browser = Client()
    assert browser.get(path).status_code == 200

    # Expired: the row's expiry has passed (the signed expiry is checked too, below).
    ChatLink.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert browser.get(path).status_code == 404
    ChatLink.objects.update(expires_at=timezone.now() + timedelta(hours=1))
    assert browser.get(path).status_code == 200

    link = ChatLink.objects.get()
    past = signing.dumps({"link": link.pk, "exp": int((timezone.now() - timedelta(minutes=1)).timestamp())},
                         salt=CHAT_LINK_SALT, compress=True)
    assert browser.get(f"/chat/l/{past}/").status_code == 404
    forged = signing.dumps({"link": link.pk, "exp": 2**40}, salt="another-salt", compress=True)
    assert browser.get(f"/chat/l/{forged}/").status_code == 404
    assert browser.get(f"/chat/l/{token[:-2]}xx/").status_code == 404

    revoked = http.delete(f"/api/v1/learners/{learner.research_id}/chat-link")
    assert revoked.status_code == 200 and revoked.json() == {"revoked": 1}
    assert browser.get(path).status_code == 404
    before = Message.objects.count()
    refused = browser.post(path + "send", {"content": "hello?"}, content_type="application/json")
    assert refused.status_code == 404
    assert Message.objects.count() == before, "a revoked link writes nothing"


def test_only_the_learners_client_issues_links_and_staff_pages_still_need_staff(linked):
    _, learner, _ = linked
    _, stranger = make_client("stranger")
    r = stranger.post(f"/api/v1/learners/{learner.research_id}/chat-link", {}, format="json")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    assert stranger.delete(f"/api/v1/learners/{learner.research_id}/chat-link").status_code == 404
    assert ChatLink.objects.filter(revoked_at__isnull=True).count() == 1
    bad = make_client("owner-2")
    own = onboarded_learner(bad[0])
    too_long = bad[1].post(f"/api/v1/learners/{own.research_id}/chat-link", {"expires_in_minutes": 10**6},
                           format="json")
    assert too_long.status_code == 400 and too_long.json()["error"]["field"] == "expires_in_minutes"
    staff_page = Client().get(f"/chat/{learner.research_id}/")
    assert staff_page.status_code == 302 and "/admin/login/" in staff_page["Location"]
