"""API routes that belong to the project layer because they reach across every app."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from bloom.erasure import learner_erase
from coaching.api import views as coaching_views


class LearnerDetailView(coaching_views.LearnerDetailView):
    """A learner: read (coaching's view) and erase. Erasure removes what memory, coaching, research
    and telemetry hold, so it is orchestrated here, above all of them."""

    @extend_schema(summary="Erase a learner", request=None, responses={204: None})
    def delete(self, request, research_id):
        """Erase the learner: memory, conversations, messages, plans… gone; telemetry anonymised."""
        learner_erase(learner=coaching_views.learner_of_client(request, research_id))
        return Response(status=status.HTTP_204_NO_CONTENT)
