"""Thin DRF views: validate input, look up through client-scoped selectors, call services/engine."""

from __future__ import annotations

import math
from uuid import UUID

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.response import Response
from rest_framework.views import APIView

from coaching import selectors, services
from coaching.api.serializers import (
    REPLAY_OR_STREAM,
    STREAM_FRAME,
    ConversationOut,
    LearnerCreateIn,
    LearnerOut,
    MessageIn,
    MessageOut,
    ProfileOut,
    ProfileUpdateIn,
    TurnReplyOut,
    TurnUnavailableOut,
)
from coaching.models import ApiClient, Message, MessageStatus
from coaching.turn import ModelDown, turn_run
from coaching.turn.streaming import TurnStream, streaming_response
from core.errors import error_response
from core.schema import ErrorOut


def client_of(request) -> ApiClient | None:
    """The API client behind the request; None for staff on a session (the chat page / admin),
    who may see every learner. Anyone else sees nothing."""
    if isinstance(request.user, ApiClient):
        return request.user
    if getattr(request.user, "is_staff", False):
        return None
    raise Http404


def learner_of_client(request, research_id):
    learner = selectors.learner_get(client=client_of(request), research_id=research_id)
    if learner is None:
        raise Http404("Learner not found.")
    return learner


def _page(request, view, rows, serializer):
    paginator = LimitOffsetPagination()
    page = paginator.paginate_queryset(rows, request, view=view)
    return paginator.get_paginated_response(serializer(page, many=True).data)


def _conversation(request, conversation_id: UUID):
    conversation = selectors.conversation_get(client=client_of(request), public_id=conversation_id)
    if conversation is None:
        raise Http404("Conversation not found.")
    return conversation


class LearnerListView(APIView):
    pagination_class = LimitOffsetPagination  # read by the schema generator

    @extend_schema(summary="List the client's learners", responses=LearnerOut(many=True))
    def get(self, request):
        client = client_of(request)
        qs = selectors.learners_for_client(client=client) if client else \
            selectors.Learner.objects.select_related("profile").all()
        return _page(request, self, qs.order_by("id"), LearnerOut)

    @extend_schema(summary="Create a learner", request=LearnerCreateIn, responses={201: LearnerOut})
    def post(self, request):
        """The response's `id` (a UUID) is the learner's one identifier in every route."""
        client = client_of(request)
        if client is None:
            return error_response("client_required", "Learners are created by an API client (Bearer token).",
                                  status_code=403)
        data = LearnerCreateIn(data=request.data)
        data.is_valid(raise_exception=True)
        learner = services.learner_create(client=client, display_name=data.validated_data["display_name"],
                                          study_arm=data.validated_data["study_arm"],
                                          timezone_name=data.validated_data["timezone"])
        return Response(LearnerOut(learner).data, status=status.HTTP_201_CREATED)


class LearnerDetailView(APIView):
    """GET here; DELETE (erasure touches every app) is added by the project layer, bloom.api."""

    @extend_schema(summary="Get a learner", responses=LearnerOut)
    def get(self, request, research_id):
        return Response(LearnerOut(learner_of_client(request, research_id)).data)


class ProfileView(APIView):
    @extend_schema(summary="Get a learner's profile", responses=ProfileOut)
    def get(self, request, research_id):
        learner = learner_of_client(request, research_id)
        return Response(ProfileOut(selectors.profile_get(learner=learner)).data)

    @extend_schema(summary="Update a learner's profile", request=ProfileUpdateIn, responses=ProfileOut)
    def patch(self, request, research_id):
        learner = learner_of_client(request, research_id)
        data = ProfileUpdateIn(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        if not data.validated_data:
            return error_response("empty_update", "Send at least one profile field.")
        profile = services.profile_update(learner=learner, **data.validated_data)
        return Response(ProfileOut(profile).data)


class ConversationStartView(APIView):
    @extend_schema(summary="Start a conversation", request=None, responses={201: ConversationOut})
    def post(self, request, research_id):
        """A learner still onboarding gets the first onboarding question as the opening message."""
        learner = learner_of_client(request, research_id)
        conversation = services.conversation_start(learner=learner)
        return Response(ConversationOut(conversation).data, status=status.HTTP_201_CREATED)


def unavailable_response(exc_message: str, retry_after: float | None, message: Message) -> Response:
    seconds = max(1, math.ceil(retry_after or 10))
    response = error_response("model_unavailable", exc_message, status_code=503,
                              headers={"Retry-After": str(seconds)})
    response.data["error"]["message_id"] = str(message.public_id)  # the kept message, as MessageOut names it
    return response


def post_message(request, conversation, content: str, key: str | None):
    """Shared by the API and the chat page: persist, then answer (JSON or SSE)."""
    wants_stream = "text/event-stream" in request.headers.get("Accept", "")
    message, created = services.message_receive(conversation=conversation, content=content, idempotency_key=key)
    if not created:
        reply = selectors.reply_for(message=message)
        if reply is not None:  # the same request again: the same reply, no second turn
            return Response({"message": MessageOut(message).data, "reply": MessageOut(reply).data, "replayed": True})
        if message.status == MessageStatus.PENDING:
            return error_response("in_progress", "This message is still being answered; retry shortly.",
                                  field="idempotency_key", status_code=409, headers={"Retry-After": "2"})
        # Unanswered (the model was down): retrying the same key answers the kept message.
        services.message_status_set(message=message, status=MessageStatus.PENDING)
    if wants_stream:
        stream = TurnStream(message).start()
        first = stream.first()
        if first[0] == "unavailable":
            return unavailable_response(first[1]["message"], first[1]["retry_after"], message)
        if first[0] == "error":
            return error_response("turn_failed", "The reply could not be produced; your message was saved.",
                                  status_code=500)
        return streaming_response(request, stream, first)
    try:
        result = turn_run(message=message)
    except ModelDown as exc:
        return unavailable_response(str(exc), exc.retry_after, message)
    except Exception:
        services.message_mark_unanswered(message=message)  # a bug must not lose the message
        raise
    message.refresh_from_db()
    return Response({"message": MessageOut(message).data, "reply": MessageOut(result.reply).data,
                     "specialist": result.reply.specialist, "trace_id": result.reply.trace_id},
                    status=status.HTTP_201_CREATED)


class EventStreamNegotiation:
    """Clients asking for `text/event-stream` get the SSE StreamingHttpResponse, which bypasses
    renderers; anything else these views return (errors, 503, replays) falls back to JSON instead
    of a 406."""

    def perform_content_negotiation(self, request, force=False):
        return super().perform_content_negotiation(request, force=True)


class MessagesView(EventStreamNegotiation, APIView):
    pagination_class = LimitOffsetPagination  # read by the schema generator

    @extend_schema(summary="List a conversation's messages", responses=MessageOut(many=True))
    def get(self, request, conversation_id):
        conversation = _conversation(request, conversation_id)
        return _page(request, self, selectors.messages_list(conversation=conversation), MessageOut)

    @extend_schema(
        summary="Send a learner message and get the coach's reply",
        request=MessageIn,
        parameters=[OpenApiParameter("Idempotency-Key", OpenApiTypes.STR, OpenApiParameter.HEADER,
                                     description="a retry with the same key returns the same reply, no second turn")],
        responses={
            201: OpenApiResponse(TurnReplyOut, description="the reply (JSON)"),
            # JSON first: a generated client parses the replay; the stream is read raw (docs/api.md).
            (200, "application/json"): OpenApiResponse(TurnReplyOut, description=REPLAY_OR_STREAM),
            (200, "text/event-stream"): OpenApiResponse(STREAM_FRAME, description=REPLAY_OR_STREAM),
            409: OpenApiResponse(ErrorOut, description="that Idempotency-Key is still being answered"),
            503: OpenApiResponse(TurnUnavailableOut, description="the model is down (Retry-After); the message "
                                                                 "is kept as unanswered"),
        })
    def post(self, request, conversation_id):
        """JSON by default (201 with the reply). With `Accept: text/event-stream` the reply is
        streamed as server-sent events (200): `token` frames, then a `final` frame. Errors before
        the first frame (503 model down, 409, 404…) are JSON either way."""
        conversation = _conversation(request, conversation_id)
        data = MessageIn(data=request.data)
        data.is_valid(raise_exception=True)
        key = request.headers.get("Idempotency-Key") or data.validated_data.get("idempotency_key")
        if key and len(key) > 128:
            return error_response("invalid", "Idempotency-Key is longer than 128 characters.", field="idempotency_key")
        return post_message(request, conversation, data.validated_data["content"], key)
