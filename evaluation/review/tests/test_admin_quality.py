"""Every project admin: the columns, filters and search staff need, and a changelist whose query
count does not grow with the number of rows (no N+1)."""

import pytest
from django.contrib import admin
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from evaluation.review.tests import factories

pytestmark = pytest.mark.django_db

PROJECT_APPS = {"outbox", "telemetry", "memory", "coaching", "research", "evaluation", "review"}
# Tables that grow with every chat turn: a COUNT(*) over them on each page load is not worth it.
LARGE_TABLES = {"identity.message", "coaching.turn", "telemetry.modelcall", "memory.fact", "memory.surprisefact",
                "memory.mention", "review.conversationaudit"}


def project_admins():
    return sorted(((m, a) for m, a in admin.site._registry.items() if m._meta.app_label in PROJECT_APPS),
                  key=lambda pair: pair[0]._meta.label)


def _ids():
    return [m._meta.label for m, _ in project_admins()]


def _lists_related_rows(model, model_admin) -> bool:
    """A column that follows a foreign key (the key itself or the default __str__, which usually
    names a parent) needs the parent in the same query."""
    fks = {f.name for f in model._meta.concrete_fields if f.is_relation}
    return any((c == "__str__" and bool(fks)) or (isinstance(c, str) and c.split("__")[0] in fks)
               for c in model_admin.list_display)


@pytest.mark.parametrize("label", _ids())
def test_admin_has_list_display_filter_search_and_related(label):
    model, model_admin = next((m, a) for m, a in project_admins() if m._meta.label == label)
    problems = []
    if not model_admin.list_display or tuple(model_admin.list_display) == ("__str__",):
        problems.append("list_display")
    if not model_admin.list_filter:
        problems.append("list_filter")
    if not model_admin.search_fields:
        problems.append("search_fields")
    if _lists_related_rows(model, model_admin) and not (model_admin.list_select_related
                                                         or model_admin.autocomplete_fields):
        problems.append("list_select_related/autocomplete_fields")
    if model._meta.label_lower in LARGE_TABLES and model_admin.show_full_result_count:
        problems.append("show_full_result_count = False")
    assert problems == [], f"{label} admin lacks {', '.join(problems)}"


def _changelist_queries(client, url) -> tuple[int, int]:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200, url
    return len(ctx.captured_queries), response.context["cl"].result_count


@pytest.mark.parametrize("label", _ids())
def test_changelist_queries_do_not_grow_with_rows(client, superuser, label):
    model, _ = next((m, a) for m, a in project_admins() if m._meta.label == label)
    opts = model._meta
    url = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
    client.force_login(superuser)
    n = 1
    factories.make_rows(model, n)
    client.get(url)  # warm per-process caches (content types, …)
    queries_n, rows_n = _changelist_queries(client, url)
    factories.make_rows(model, 2 * n)
    queries_3n, rows_3n = _changelist_queries(client, url)
    assert rows_3n >= rows_n + 2 * n, f"{label}: rows were not listed ({rows_n} → {rows_3n})"
    assert queries_3n == queries_n, f"{label}: {queries_n} queries at {rows_n} rows, {queries_3n} at {rows_3n}"
