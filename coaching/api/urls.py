from django.urls import path

from coaching.api import views

# One style across /api/v1/: no trailing slash; a learner, a conversation and a session are always
# their UUID (the `id` their responses carry; the integer key stays inside). The learner detail
# route (GET + DELETE) is wired by the project (bloom/urls.py): erasure reaches every app.
urlpatterns = [
    path("learners", views.LearnerListView.as_view(), name="learner-list"),
    path("learners/<uuid:research_id>/profile", views.ProfileView.as_view(), name="learner-profile"),
    path("learners/<uuid:research_id>/conversations", views.ConversationStartView.as_view(),
         name="conversation-start"),
    path("learners/<uuid:research_id>/plans", views.PlanListView.as_view(), name="learner-plans"),
    path("learners/<uuid:research_id>/sessions", views.SessionListView.as_view(), name="learner-sessions"),
    path("learners/<uuid:research_id>/checkins", views.CheckInListView.as_view(), name="learner-checkins"),
    path("learners/<uuid:research_id>/chat-link", views.ChatLinkView.as_view(), name="learner-chat-link"),
    path("sessions/<uuid:session_id>", views.SessionDetailView.as_view(), name="session-detail"),
    path("sessions/<uuid:session_id>/checkins", views.SessionCheckInView.as_view(), name="session-checkin"),
    path("conversations/<uuid:conversation_id>/messages", views.MessagesView.as_view(), name="conversation-messages"),
    path("conversations/<uuid:conversation_id>/turns", views.TurnListView.as_view(), name="conversation-turns"),
]

# Issue 7 (research app): studies export, codebook, calendar feed/import.
from django.urls import include  # noqa: E402

urlpatterns += [path("research/", include("coaching.research.api.urls"))]
