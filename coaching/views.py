"""The chat page (server-rendered, htmx served locally by django-htmx, tokens streamed over SSE
read by a small script of our own). Staff only: staff open any learner by research id; the demo
seeds a staff user. CSRF: the send endpoint uses DRF SessionAuthentication, which enforces it."""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404
from django.shortcuts import redirect, render
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


@staff_member_required
def chat_page(request, research_id):
    learner = _learner_or_404(research_id)
    conversation = _conversation(learner)
    return render(request, "coaching/chat.html", {
        "learner": learner, "conversation": conversation,
        "messages_list": selectors.messages_list(conversation=conversation),
    })


@staff_member_required
def chat_messages(request, research_id):
    learner = _learner_or_404(research_id)
    conversation = _conversation(learner)
    return render(request, "coaching/_messages.html",
                  {"messages_list": selectors.messages_list(conversation=conversation)})


class IsStaff(permissions.BasePermission):
    def has_permission(self, request, view) -> bool:
        return bool(getattr(request.user, "is_staff", False))


class ChatSendView(EventStreamNegotiation, APIView):
    authentication_classes = [SessionAuthentication]  # enforces CSRF for the page
    permission_classes = [IsStaff]

    @extend_schema(exclude=True)  # the page's own form endpoint, not part of the client API
    def post(self, request, research_id):
        learner = _learner_or_404(research_id)
        conversation = _conversation(learner)
        data = MessageIn(data=request.data)
        data.is_valid(raise_exception=True)
        return post_message(request, conversation, data.validated_data["content"],
                            data.validated_data.get("idempotency_key"))


def root(request):
    return redirect("coaching:home")
