"""Server-rendered pages (the htmx chat page)."""

from django.urls import path

from coaching import views

app_name = "coaching"

urlpatterns = [
    path("", views.root, name="root"),
    path("chat/", views.home, name="home"),
    path("chat/<uuid:research_id>/", views.chat_page, name="chat"),
    path("chat/<uuid:research_id>/messages", views.chat_messages, name="chat-messages"),
    path("chat/<uuid:research_id>/send", views.ChatSendView.as_view(), name="chat-send"),
    # A learner's own page, behind a signed expiring link (no login).
    path("chat/l/<str:token>/", views.learner_chat_page, name="learner-chat"),
    path("chat/l/<str:token>/messages", views.learner_chat_messages, name="learner-chat-messages"),
    path("chat/l/<str:token>/send", views.LearnerChatSendView.as_view(), name="learner-chat-send"),
]
