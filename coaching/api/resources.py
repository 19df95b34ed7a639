"""The resources a client needs beside the chat (thin DRF views over the same services the
coach's tools call, so a session a client creates or marks done is indistinguishable from one made
in the chat): plans, planned sessions and their check-ins, the turns of a conversation, and the
signed chat link a learner opens."""


from __future__ import annotations

from datetime import timedelta
from uuid import UUID

from django.http import Http404
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.response import Response
from rest_framework.views import APIView

from coaching import selectors, services
from coaching.api.serializers import (
    ChatLinkIn,
    ChatLinkOut,
    ChatLinksRevokedOut,
    CheckInCreatedOut,
    CheckInIn,
    CheckInOut,
    PlanOut,
    SessionIn,
    SessionOut,
    SessionPatchIn,
    TurnOut,
    WeekQuery,
)
from coaching.api.views import _conversation, _page, client_of, learner_of_client
from core.schema import ErrorOut


def _session(request, session_id: UUID):
    session = selectors.session_get(client=client_of(request), public_id=session_id)
    if session is None:
        raise Http404("Session not found.")
    return session


def _week(request) -> WeekQuery:
    query = WeekQuery(data=request.query_params)
    query.is_valid(raise_exception=True)
    return query


class PlanListView(APIView):
    pagination_class = LimitOffsetPagination

    @extend_schema(summary="A learner's weekly plans with their sessions", parameters=[WeekQuery],
                   responses=PlanOut(many=True))
    def get(self, request, research_id):
        """Newest week first; `week=<any day>` gives that week's plan only."""
        learner = learner_of_client(request, research_id)
        week = _week(request)
        return _page(request, self, selectors.plans_for(learner=learner, week_start=week.week_start()), PlanOut)


class SessionListView(APIView):
    pagination_class = LimitOffsetPagination

    @extend_schema(summary="A learner's planned sessions", parameters=[WeekQuery], responses=SessionOut(many=True))
    def get(self, request, research_id):
        """In start order; filter by `week` (any day of it, the learner's calendar) and `status`."""
        learner = learner_of_client(request, research_id)
        week = _week(request)
        rows = selectors.sessions_for(learner=learner, week_start=week.week_start(),
                                      status=week.validated_data.get("status"))
        return _page(request, self, rows.select_related("plan__learner"), SessionOut)

    @extend_schema(summary="Plan a session", request=SessionIn,
                   responses={201: SessionOut, 409: OpenApiResponse(ErrorOut, description="the time is taken")})
    def post(self, request, research_id):
        """Goes into the plan of the session's week (created when missing). 5-600 minutes, not in
        the past, not overlapping another planned or completed session of the learner (409
        `session_overlap`)."""
        learner = learner_of_client(request, research_id)
        data = SessionIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        session = services.session_schedule(learner=learner, start=v["start"], duration_minutes=v["duration_minutes"],
                                            topic=v["topic"])
        return Response(SessionOut(session).data, status=status.HTTP_201_CREATED)


class SessionDetailView(APIView):
    @extend_schema(summary="Get a session", responses=SessionOut)
    def get(self, request, session_id):
        return Response(SessionOut(_session(request, session_id)).data)

    @extend_schema(summary="Reschedule a session", request=SessionPatchIn,
                   responses={200: SessionOut,
                              409: OpenApiResponse(ErrorOut, description="already reported, or the time is taken")})
    def patch(self, request, session_id):
        """Move (`start`), resize or rename a planned session; a reported one (completed,
        skipped, missed) is a 409, and so is a new time or length that overlaps another session
        (`session_overlap`)."""
        session = _session(request, session_id)
        data = SessionPatchIn(data=request.data)
        data.is_valid(raise_exception=True)
        session = services.session_reschedule(session=session, **data.validated_data)
        return Response(SessionOut(session).data)


class SessionCheckInView(APIView):
    @extend_schema(summary="Mark a session done or skipped", request=CheckInIn, responses={201: CheckInCreatedOut})
    def post(self, request, session_id):
        """Records a check-in (self report) and sets the session's status, as a "done" in the chat does."""
        session = _session(request, session_id)
        data = CheckInIn(data=request.data)
        data.is_valid(raise_exception=True)
        checkin = services.checkin_log(learner=session.plan.learner, outcome=data.validated_data["outcome"],
                                       session=session, changed_by=services.StatusSource.API)
        return Response(CheckInCreatedOut(checkin).data, status=status.HTTP_201_CREATED)


class CheckInListView(APIView):
    pagination_class = LimitOffsetPagination

    @extend_schema(summary="A learner's check-ins", responses=CheckInOut(many=True))
    def get(self, request, research_id):
        """Newest first: what the learner reported, in the chat or through this API."""
        learner = learner_of_client(request, research_id)
        rows = selectors.checkins_for(learner=learner).select_related("learner", "session", "message")
        return _page(request, self, rows, CheckInOut)


class TurnListView(APIView):
    pagination_class = LimitOffsetPagination

    @extend_schema(summary="The turns of a conversation", responses=TurnOut(many=True))
    def get(self, request, conversation_id):
        """One per learner message: the routing decision (rule, reason), the specialist, the
        outcome (ok, fallback, unavailable, templated), the tools called and the trace id."""
        conversation = _conversation(request, conversation_id)
        return _page(request, self, selectors.turns_for(conversation=conversation), TurnOut)


class ChatLinkView(APIView):
    @extend_schema(summary="Issue a signed, expiring chat link for a learner", request=ChatLinkIn,
                   responses={201: ChatLinkOut})
    def post(self, request, research_id):
        """The page behind the URL shows this learner's conversation, streams replies and needs
        no login; anyone holding the URL can chat as the learner until it expires or is revoked."""
        learner = learner_of_client(request, research_id)
        data = ChatLinkIn(data=request.data)
        data.is_valid(raise_exception=True)
        link, token = services.chat_link_create(
            learner=learner, expires_in=timedelta(minutes=data.validated_data["expires_in_minutes"]))
        url = request.build_absolute_uri(reverse("coaching:learner-chat", args=[token]))
        return Response({"url": url, "expires_at": link.expires_at}, status=status.HTTP_201_CREATED)

    @extend_schema(summary="Revoke every chat link of a learner", request=None, responses=ChatLinksRevokedOut)
    def delete(self, request, research_id):
        return Response({"revoked": services.chat_links_revoke(learner=learner_of_client(request, research_id))})
