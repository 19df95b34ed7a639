"""OpenAPI descriptions of the research API views. Those views validate inside their methods,
where drf-spectacular cannot see the serializers; these extensions describe them from outside (the
views stay unchanged). Imported once by the research app's `ready()`."""

from __future__ import annotations


def _research_views():
    from drf_spectacular.extensions import OpenApiViewExtension
    from drf_spectacular.types import OpenApiTypes
    from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view

    def describe(target: str, **methods):
        def view_replacement(self):
            return extend_schema_view(**methods)(type("Described", (self.target_class,), {}))

        return type(f"Describe{target.rsplit('.', 1)[1]}", (OpenApiViewExtension,),
                    {"target_class": target, "view_replacement": view_replacement})

    from coaching.research.api.serializers import (
        CalendarFeedOutSerializer,
        CalendarImportOutSerializer,
        CalendarImportSerializer,
        ExportQuerySerializer,
    )

    base = "coaching.research.api.views."
    return [
        describe(base + "StudyExportView", get=extend_schema(
            summary="Export a study's adherence data (permission research.export_research_data)",
            parameters=[ExportQuerySerializer],
            responses={(200, "text/csv"): OpenApiTypes.STR, (200, "application/vnd.apache.parquet"):
                       OpenApiTypes.BINARY})),
        describe(base + "CodebookView", get=extend_schema(
            summary="The export's codebook (Markdown)",
            parameters=[OpenApiParameter("study", OpenApiTypes.UUID, description="a study's id: add its date-shift "
                                                                                 "statement")],
            responses={(200, "text/markdown"): OpenApiTypes.STR})),
        describe(base + "LearnerCalendarView", post=extend_schema(
            summary="Create or rotate a learner's calendar feed (the URL is shown once)", request=None,
            responses={201: CalendarFeedOutSerializer})),
        describe(base + "LearnerCalendarConfirmView", post=extend_schema(
            summary="Record that the learner subscribed to their calendar feed", request=None,
            responses=CalendarFeedOutSerializer)),
        describe(base + "LearnerCalendarImportView", post=extend_schema(
            summary="Import completed sessions from an ICS file", request=CalendarImportSerializer,
            responses=CalendarImportOutSerializer)),
    ]


RESEARCH_VIEW_EXTENSIONS = _research_views()
