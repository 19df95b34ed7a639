from django.urls import path

from coaching.api import views

urlpatterns = [
    path("learners", views.LearnerListView.as_view(), name="learner-list"),
    path("learners/<uuid:research_id>", views.LearnerDetailView.as_view(), name="learner-detail"),
    path("learners/<uuid:research_id>/profile", views.ProfileView.as_view(), name="learner-profile"),
    path("learners/<uuid:research_id>/conversations", views.ConversationStartView.as_view(),
         name="conversation-start"),
    path("conversations/<int:conversation_id>/messages", views.MessagesView.as_view(), name="conversation-messages"),
]

# Issue 7 (research app): studies export, codebook, calendar feed/import.
from django.urls import include  # noqa: E402

urlpatterns += [path("research/", include("coaching.research.api.urls"))]
