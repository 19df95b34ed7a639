"""Server-rendered pages (the htmx chat page)."""

urlpatterns: list = []
