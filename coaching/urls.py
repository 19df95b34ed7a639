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
]
