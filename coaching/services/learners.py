"""Learners (creation, their time zone), the demo staff user and learner chat links."""

from __future__ import annotations

from datetime import timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core import signing
from django.db import transaction
from django.utils import timezone

from coaching.models import CHAT_LINK_SALT, ApiClient, ChatLink, Learner, LearnerProfile, StudyArm
from core.errors import ApplicationError


def _check_timezone(name: str) -> str:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ApplicationError(f"unknown time zone {name!r} (use an IANA name such as 'Europe/Paris')",
                               field="timezone") from None
    return name


@transaction.atomic
def learner_create(*, client: ApiClient, display_name: str = "", study_arm: str = StudyArm.COACH,
                   timezone_name: str = "UTC") -> Learner:
    if study_arm not in StudyArm.values:
        raise ApplicationError(f"study_arm must be one of {', '.join(StudyArm.values)}", field="study_arm")
    learner = Learner.objects.create(client=client, display_name=display_name, study_arm=study_arm,
                                     timezone=_check_timezone(timezone_name))
    LearnerProfile.objects.create(learner=learner)
    return learner


def learner_tz(learner: Learner) -> ZoneInfo:
    try:
        return ZoneInfo(learner.timezone)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def staff_demo_user_ensure(*, username: str, password: str) -> AbstractBaseUser:
    User = get_user_model()
    user, _ = User.objects.get_or_create(username=username, defaults={"is_staff": True, "is_superuser": True})
    user.is_staff = user.is_superuser = True
    user.set_password(password)
    user.save()
    return user


# --- learner chat links ---------------------------------------------------------------------------

@transaction.atomic
def chat_link_create(*, learner: Learner, expires_in: timedelta) -> tuple[ChatLink, str]:
    """A signed link token for one learner's chat page, valid for `expires_in`. Returns (row,
    token); the token is not stored (the signature is checked against SECRET_KEY)."""
    link = ChatLink.objects.create(learner=learner, expires_at=timezone.now() + expires_in)
    token = signing.dumps({"link": link.pk, "exp": int(link.expires_at.timestamp())}, salt=CHAT_LINK_SALT,
                          compress=True)
    return link, token


@transaction.atomic
def chat_links_revoke(*, learner: Learner) -> int:
    """Every live link of the learner stops working now."""
    return ChatLink.objects.filter(learner=learner, revoked_at__isnull=True).update(revoked_at=timezone.now())
