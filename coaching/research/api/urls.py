from django.urls import path

from coaching.research.api import views

urlpatterns = [
    path("studies/<uuid:study_id>/export", views.StudyExportView.as_view(), name="research-study-export"),
    path("codebook", views.CodebookView.as_view(), name="research-codebook"),
    path("calendar/<str:token>.ics", views.calendar_feed, name="research-calendar-feed"),
    path("learners/<uuid:research_id>/calendar", views.LearnerCalendarView.as_view(), name="research-calendar"),
    path("learners/<uuid:research_id>/calendar/confirm", views.LearnerCalendarConfirmView.as_view(),
         name="research-calendar-confirm"),
    path("learners/<uuid:research_id>/calendar/import", views.LearnerCalendarImportView.as_view(),
         name="research-calendar-import"),
]
