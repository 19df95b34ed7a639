"""Server-rendered pages (the htmx chat page, tokens streamed over SSE read by a small script of
our own). Two ways in:

- staff (`/chat/<research_id>/`): open any learner; the demo seeds a staff user. The send endpoint
  uses DRF SessionAuthentication, which enforces CSRF.
- a learner (`/chat/l/<token>/`): a signed, expiring link an API client issued for that learner
  (`POST /api/v1/learners/<id>/chat-link`). No login: the token in the URL is the credential, it
  opens that learner's conversation only, and it stops working when it expires or is revoked."""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import permissions
from rest_framework.authentication import SessionAuthentication
from rest_framework.views import APIView

from coaching import selectors, services
from coaching.api.serializers import MessageIn
from coaching.api.views import EventStreamNegotiation, post_message
from coaching.models import Learner


def _learner_or_404(research_id) -> Learner:
    learner = selectors.learner_get(client=None, research_id=research_id)
    if learner is None:
        raise Http404("Learner not found.")
    return learner


def _conversation(learner: Learner):
    return selectors.conversation_latest(learner=learner) or services.conversation_start(learner=learner)


@staff_member_required
def home(request):
    learners = Learner.objects.select_related("profile").order_by("-created_at")[:100]
    return render(request, "coaching/home.html", {"learners": learners})


def _chat(request, learner: Learner, *, messages_url: str, send_url: str, learner_view: bool):
    conversation = _conversation(learner)
    response = render(request, "coaching/chat.html", {
        "learner": learner, "conversation": conversation, "learner_view": learner_view,
        "messages_url": messages_url, "send_url": send_url,
        "messages_list": selectors.messages_list(conversation=conversation),
    })
    if learner_view:
        # The URL is a credential: never sent as a Referer, never cached.
        response["Referrer-Policy"] = "no-referrer"
        response["Cache-Control"] = "no-store"
    return response


def _messages(request, learner: Learner):
    conversation = _conversation(learner)
    return render(request, "coaching/_messages.html",
                  {"messages_list": selectors.messages_list(conversation=conversation)})


@staff_member_required
def chat_page(request, research_id):
    return _chat(request, _learner_or_404(research_id), learner_view=False,
                 messages_url=reverse("coaching:chat-messages", args=[research_id]),
                 send_url=reverse("coaching:chat-send", args=[research_id]))


@staff_member_required
def chat_messages(request, research_id):
    return _messages(request, _learner_or_404(research_id))


def _linked_learner(token: str) -> Learner:
    learner = selectors.chat_link_learner(token=token)
    if learner is None:
        raise Http404("This chat link is invalid, has expired or was revoked.")
    return learner


def learner_chat_page(request, token: str):
    return _chat(request, _linked_learner(token), learner_view=True,
                 messages_url=reverse("coaching:learner-chat-messages", args=[token]),
                 send_url=reverse("coaching:learner-chat-send", args=[token]))


def learner_chat_messages(request, token: str):
    return _messages(request, _linked_learner(token))


class IsStaff(permissions.BasePermission):
    def has_permission(self, request, view) -> bool:
        return bool(getattr(request.user, "is_staff", False))


def _send(request, learner: Learner):
    data = MessageIn(data=request.data)
    data.is_valid(raise_exception=True)
    return post_message(request, _conversation(learner), data.validated_data["content"],
                        data.validated_data.get("idempotency_key"))


class ChatSendView(EventStreamNegotiation, APIView):
    authentication_classes = [SessionAuthentication]  # enforces CSRF for the page
    permission_classes = [IsStaff]

    @extend_schema(exclude=True)  # the page's own form endpoint, not part of the client API
    def post(self, request, research_id):
        return _send(request, _learner_or_404(research_id))


class LearnerChatSendView(EventStreamNegotiation, APIView):
    """The learner page's send endpoint: the link token is the only credential (no session, so
    no CSRF to check; a cross-site request would need the secret token itself)."""

    authentication_classes: list = []
    permission_classes = [permissions.AllowAny]

    @extend_schema(exclude=True)
    def post(self, request, token: str):
        return _send(request, _linked_learner(token))


def root(request):
    return redirect("coaching:home")
