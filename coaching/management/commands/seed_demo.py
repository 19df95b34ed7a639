"""`make run` seeds a demo: a staff user (printed credentials), an API client with a fresh
printed token, and a demo learner with a completed profile and a short conversation. Idempotent:
running it again creates no duplicates (the demo token is rotated, so a working one is printed)."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from coaching import services
from coaching.models import ApiClient, Learner
from core.identity import services as identity_services

DEMO_USER = "demo"
DEMO_CLIENT = "Demo client"
DEMO_LEARNER = "Demo learner"


class Command(BaseCommand):
    help = "Create the demo staff user, API client + token and a demo learner (idempotent)."

    def handle(self, *args, **options):
        with transaction.atomic():
            password_env = settings.BLOOM_DEMO_PASSWORD
            User = get_user_model()
            user = User.objects.filter(username=DEMO_USER).first()
            if user is None or password_env:
                password = password_env or secrets.token_urlsafe(12)
                user = services.staff_demo_user_ensure(username=DEMO_USER, password=password)
                password_note = password
            else:
                password_note = "(unchanged — set BLOOM_DEMO_PASSWORD and re-run to reset it)"

            client = ApiClient.objects.filter(name=DEMO_CLIENT).first() or \
                identity_services.api_client_create(name=DEMO_CLIENT, owner=user)
            # Raw tokens are never stored, so the demo token is rotated to print a working one.
            client.tokens.filter(name="seed_demo", revoked_at__isnull=True).update(revoked_at=timezone.now())
            _, raw = identity_services.api_token_create(client=client, name="seed_demo")

            learner = Learner.objects.filter(client=client, display_name=DEMO_LEARNER).first()
            if learner is None:
                learner = services.learner_create(client=client, display_name=DEMO_LEARNER, timezone_name="UTC")
                services.profile_update(learner=learner, primary_goal="learn to swim freestyle", goal_category="sport",
                                        weekly_hours=3, best_time="evening", confidence=6)
                services.conversation_start(learner=learner)
                services.coach_message_post(learner=learner, specialist="coach",
                                            content="Welcome back! Say “let's plan” to plan this week's swims.")
        self.stdout.write(self.style.SUCCESS("Demo ready:"))
        self.stdout.write(f"  staff login   user={DEMO_USER} password={password_note}")
        self.stdout.write(f"  API token     {raw}   (Authorization: Bearer …)")
        self.stdout.write(f"  chat page     /chat/{learner.research_id}/")
