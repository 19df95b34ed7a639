"""Thin views: staff export (streamed CSV / Parquet file), codebook, the tokenised ICS feed, and
learner calendar actions for API clients."""

from __future__ import annotations

import datetime as dt
import tempfile
from uuid import UUID

from django.core.handlers.asgi import ASGIRequest
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET
from rest_framework.authentication import SessionAuthentication
from rest_framework.permissions import IsAdminUser, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from coaching.models import ApiClient, Learner
from coaching.research import selectors, services
from coaching.research.api.permissions import CanExportResearchData
from coaching.research.api.serializers import (
    CalendarFeedOutSerializer,
    CalendarImportOutSerializer,
    CalendarImportSerializer,
    ExportQuerySerializer,
)
from coaching.research.calendar import FEED_HISTORY_DAYS, render_feed
from coaching.research.codebook import codebook_markdown
from coaching.research.export import (
    as_async_iterator,
    export_records,
    export_stamp,
    logged_csv_stream,
    write_parquet,
)
from coaching.research.models import Study
from core.errors import error_response
from core.identity.auth import ApiTokenAuthentication


def _client_authentication() -> list:
    """API-token auth for learner actions; session auth (staff) always."""
    return [ApiTokenAuthentication, SessionAuthentication]


def export_filename(study: Study, exported_at: dt.datetime, ext: str) -> str:
    """Stamped with the export time the rows carry (shifted with the study's dates), never the
    real one: the difference of the two would be the shift."""
    stamp = export_stamp(study=study, exported_at=exported_at)
    return f"bloom-adherence-study-{study.public_id}-{stamp:%Y%m%dT%H%M%SZ}.{ext}"


def export_response(*, request: HttpRequest, study: Study, fmt: str, via: str,
                    complete_weeks_only: bool = False) -> HttpResponse:
    """Shared by the API and the admin action. CSV is streamed; Parquet needs its footer written
    last, so it goes to a temporary file (row groups keep memory bounded) and is then streamed."""
    exported_at = timezone.now().replace(microsecond=0)
    log = services.export_log_start(study=study, user=request.user, via=via, fmt=fmt)
    if fmt == "parquet":
        spool = tempfile.TemporaryFile()  # noqa: SIM115 (closed by FileResponse)
        count = write_parquet(
            export_records(study=study, exported_at=exported_at, complete_weeks_only=complete_weeks_only), spool)
        services.export_log_finish(log_id=log.pk, row_count=count)
        spool.seek(0)
        return FileResponse(spool, as_attachment=True, filename=export_filename(study, exported_at, "parquet"),
                            content_type="application/vnd.apache.parquet")
    chunks = logged_csv_stream(study=study, log_id=log.pk, exported_at=exported_at,
                               complete_weeks_only=complete_weeks_only)
    body = as_async_iterator(chunks) if isinstance(request, ASGIRequest) else chunks
    response = StreamingHttpResponse(body, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{export_filename(study, exported_at, "csv")}"'
    response["X-Schema-Version"] = log.schema_version
    return response


class StudyExportView(APIView):
    permission_classes = [CanExportResearchData]

    def perform_content_negotiation(self, request, force=False):
        # `?format=csv|parquet` names the file format, not a DRF renderer.
        return super().perform_content_negotiation(request, force=True)

    def get(self, request, study_id: UUID):
        """The study by its UUID; an integer matches no route (bloom/urls.py answers it with the
        404 every route gives an integer)."""
        query = ExportQuerySerializer(data=request.query_params)
        if not query.is_valid():
            return error_response("invalid_format", "format must be csv or parquet", field="format")
        fmt = query.validated_data["format"]
        study = Study.objects.filter(public_id=study_id).first()
        if study is None:
            return error_response("not_found", "no such study", status_code=404)
        return export_response(request=request._request, study=study, fmt=fmt, via="api",
                               complete_weeks_only=query.validated_data["complete_weeks_only"])


class CodebookView(APIView):
    permission_classes = [IsAdminUser]

    def perform_content_negotiation(self, request, force=False):
        return super().perform_content_negotiation(request, force=True)

    def get(self, request):
        """`?study=<id>` (the study's UUID) adds that study's statement on date shifting."""
        key = request.query_params.get("study", "")
        try:
            study = Study.objects.filter(public_id=UUID(key)).first() if key else None
        except ValueError:  # an integer key too: studies are addressed by their UUID
            return error_response("not_found", f"{key!r} is not a study id: studies are addressed by their UUID",
                                  field="study", status_code=404)
        if key and study is None:
            return error_response("not_found", "no such study", field="study", status_code=404)
        return HttpResponse(codebook_markdown(study), content_type="text/markdown; charset=utf-8")


@require_GET
def calendar_feed(request: HttpRequest, token: str) -> HttpResponse:
    """The subscribed feed. The unguessable token is the only credential (calendar clients cannot
    send headers); unknown or revoked tokens are a plain 404, indistinguishable from each other."""
    feed = selectors.calendar_feed_by_token_hash(services.hash_feed_token(token))
    if feed is None:
        raise Http404
    now = timezone.now()
    services.calendar_feed_touch(feed=feed)
    since = now - dt.timedelta(days=FEED_HISTORY_DAYS)
    sessions = selectors.calendar_feed_sessions(learner_id=feed.learner_id, since=since)
    response = HttpResponse(render_feed(sessions, now=now), content_type="text/calendar; charset=utf-8")
    response["Cache-Control"] = "private, max-age=300"
    return response


class _LearnerCalendarBase(APIView):
    permission_classes = [IsAuthenticated]

    def get_authenticators(self):
        return [cls() for cls in _client_authentication()]

    def learner(self, request, research_id) -> Learner:
        scope = Learner.objects.all()
        if not getattr(request.user, "is_staff", False):
            # An API client sees only its own learners; any other non-staff user sees none.
            is_client = isinstance(request.user, ApiClient)
            scope = scope.filter(client=request.user) if is_client else scope.none()
        return get_object_or_404(scope, research_id=research_id)


def _feed_out(request, feed, raw: str | None) -> dict:
    path = reverse("research-calendar-feed", kwargs={"token": raw}) if raw else ""
    return CalendarFeedOutSerializer({
        "url": request.build_absolute_uri(path) if raw else "",
        "created_at": feed.created_at,
        "subscription_confirmed": feed.subscription_confirmed_at is not None,
    }).data


class LearnerCalendarView(_LearnerCalendarBase):
    def post(self, request, research_id):
        """Create or rotate the feed; the URL is in this response only."""
        feed, raw = services.calendar_feed_create(learner=self.learner(request, research_id))
        return Response(_feed_out(request, feed, raw), status=201)


class LearnerCalendarConfirmView(_LearnerCalendarBase):
    def post(self, request, research_id):
        feed = services.calendar_subscription_confirm(learner=self.learner(request, research_id))
        return Response(_feed_out(request, feed, None))


class LearnerCalendarImportView(_LearnerCalendarBase):
    def post(self, request, research_id):
        learner = self.learner(request, research_id)
        data = CalendarImportSerializer(data=request.data)
        if not data.is_valid():
            return error_response("invalid_ics", "send the calendar as `ics` text", field="ics")
        result = services.calendar_import(learner=learner, ics=data.validated_data["ics"])
        return Response(CalendarImportOutSerializer(result).data)
