"""End to end in a real browser: Debian's chromium (headless, driven by Playwright) logs in to the
admin served by pytest-django's live_server, opens a conversation audit, tags a defect and opens
the defect report. Screenshots go to test-artifacts/review/ (kept by CI)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.conf import settings

from evaluation.review.models import DefectTag, DefectTagHistory
from evaluation.review.tests import factories

CHROMIUM = os.environ.get("BLOOM_CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = Path(settings.BASE_DIR) / "test-artifacts" / "review"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM),
                                reason=f"{CHROMIUM} is missing: run scripts/install_chromium.sh "
                                       "(make services does it)")


@pytest.fixture
def browser_page(tmp_path, monkeypatch):
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the ORM calls the test makes
    # between browser steps are plain synchronous code, so Django's async guard does not apply.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 1000})
        context.set_default_timeout(15_000)
        page = context.new_page()
        try:
            yield page
        finally:
            context.close()


@pytest.mark.django_db(transaction=True)
def test_login_audit_tag_and_report(live_server, browser_page):
    page = browser_page
    factories.user(username="reviewer", superuser=True, password="pw-browser-123")
    conversation = factories.conversation_with_turns(3)
    audit_path = f"/admin/review/conversationaudit/{conversation.pk}/audit/"

    page.goto(f"{live_server.url}/admin/login/?next={audit_path}")
    page.fill("#id_username", "reviewer")
    page.fill("#id_password", "pw-browser-123")
    page.click("input[type=submit]")
    page.wait_for_url(f"**{audit_path}")
    assert page.locator("section.audit-turn").count() == 3
    assert f"LEARNERSAID c{conversation.pk} #0" in page.inner_text("section.audit-turn >> nth=0")
    page.screenshot(path=str(ARTIFACTS / "01-audit.png"), full_page=True)

    first = page.locator("section.audit-turn").first
    first.locator("details.defect-form > summary").click()
    first.locator("select[name=category]").select_option("scaffold_leak")
    first.locator("select[name=layer]").select_option("model_choice")
    first.locator("textarea[name=note]").fill("scaffold text shown to the learner")
    first.locator("input[type=submit]").click()
    page.wait_for_selector(".defect-tag")
    assert "Scaffold leak" in page.inner_text(".defect-tag")
    assert "Tagged turn" in page.inner_text("ul.messagelist")
    page.screenshot(path=str(ARTIFACTS / "02-tagged.png"), full_page=True)

    tag = DefectTag.objects.get()
    assert (tag.category, tag.layer, tag.tagged_by.username) == ("scaffold_leak", "model_choice", "reviewer")
    assert DefectTagHistory.objects.filter(tag=tag, action="created").exists()

    page.click("text=defect report")
    page.wait_for_url("**/admin/review/defecttag/report/")
    matrix = page.inner_text("#defect-matrix")
    assert "Scaffold leak" in matrix
    assert page.locator("svg.defect-chart rect[fill]").count() >= 1
    page.screenshot(path=str(ARTIFACTS / "03-report.png"), full_page=True)
