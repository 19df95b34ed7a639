import pytest
from django.contrib.auth.models import Group, Permission
from django.core.management import call_command

from evaluation.review.roles import AUDITOR_PERMISSIONS, RESEARCHER_PERMISSIONS, setup_roles
from evaluation.review.tests import factories

pytestmark = pytest.mark.django_db


def perms(group_name):
    return {f"{p.content_type.app_label}.{p.codename}"
            for p in Group.objects.get(name=group_name).permissions.select_related("content_type")}


def test_post_migrate_created_the_groups():
    # The test database was built by `migrate`, whose post_migrate hook ran setup_roles.
    assert set(Group.objects.values_list("name", flat=True)) >= {"auditor", "researcher", "admin"}


def test_setup_roles_is_idempotent_and_resets_drift(capsys):
    setup_roles()
    before = {name: perms(name) for name in ("auditor", "researcher", "admin")}
    auditor = Group.objects.get(name="auditor")
    auditor.permissions.add(Permission.objects.get(codename="export_research_data"))  # drift by hand
    call_command("setup_roles")
    call_command("setup_roles")
    assert {name: perms(name) for name in ("auditor", "researcher", "admin")} == before
    assert Group.objects.filter(name="auditor").count() == 1
    out = capsys.readouterr().out
    assert "auditor:" in out and "not found" not in out


def test_role_contents():
    setup_roles()
    assert perms("auditor") == set(AUDITOR_PERMISSIONS)
    assert perms("researcher") == set(RESEARCHER_PERMISSIONS)
    assert "review.view_message_text" not in perms("researcher")
    assert "research.export_research_data" not in perms("auditor")
    assert not any(p.startswith(("identity.", "coaching.", "memory.", "telemetry.")) for p in perms("researcher"))
    assert perms("admin") == {f"{p.content_type.app_label}.{p.codename}"
                              for p in Permission.objects.select_related("content_type")}
    # auditors read but never change telemetry or memory
    assert not any(p.split(".")[1].startswith(("change_", "delete_", "add_"))
                   for p in perms("auditor") if p.startswith(("telemetry.", "memory.", "identity.", "coaching.")))


def test_group_members_get_the_permissions(roles):
    auditor = factories.user(groups=("auditor",))
    researcher = factories.user(groups=("researcher",))
    admin_user = factories.user(groups=("admin",))
    assert auditor.has_perm("review.add_defecttag") and auditor.has_perm("review.view_message_text")
    assert researcher.has_perm("research.export_research_data")
    assert not researcher.has_perm("review.view_message_text")
    assert admin_user.has_perm("research.export_research_data") and admin_user.has_perm("review.view_message_text")
