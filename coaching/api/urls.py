from django.urls import path

from coaching.api import resources, views

# One style across /api/v1/: no trailing slash; a learner, a conversation and a session are always
# their UUID (the `id` their responses carry; the integer key stays inside). The learner detail
# route (GET + DELETE) is wired by the project (bloom/urls.py): erasure reaches every app.
urlpatterns = [
    path("learners", views.LearnerListView.as_view(), name="learner-list"),
    path("learners/<uuid:research_id>/profile", views.ProfileView.as_view(), name="learner-profile"),
    path("learners/<uuid:research_id>/conversations", views.ConversationStartView.as_view(),
         name="conversation-start"),
    path("learners/<uuid:research_id>/plans", resources.PlanListView.as_view(), name="learner-plans"),
    path("learners/<uuid:research_id>/sessions", resources.SessionListView.as_view(), name="learner-sessions"),
    path("learners/<uuid:research_id>/checkins", resources.CheckInListView.as_view(), name="learner-checkins"),
    path("learners/<uuid:research_id>/chat-link", resources.ChatLinkView.as_view(), name="learner-chat-link"),
    path("sessions/<uuid:session_id>", resources.SessionDetailView.as_view(), name="session-detail"),
    path("sessions/<uuid:session_id>/checkins", resources.SessionCheckInView.as_view(), name="session-checkin"),
    path("conversations/<uuid:conversation_id>/messages", views.MessagesView.as_view(), name="conversation-messages"),
    path("conversations/<uuid:conversation_id>/turns", resources.TurnListView.as_view(), name="conversation-turns"),
]

# The research app's client routes: study export, codebook, calendar feed and import.
from django.urls import include  # noqa: E402

urlpatterns += [path("research/", include("coaching.research.api.urls"))]
