from django.urls import path

from memory.api import views

app_name = "memory"
urlpatterns = [
    path("learners/<int:learner_id>/facts/", views.LearnerFactsView.as_view(), name="learner-facts"),
    path("learners/<int:learner_id>/search/", views.LearnerSearchView.as_view(), name="learner-search"),
    path("learners/<int:learner_id>/context/", views.LearnerContextView.as_view(), name="learner-context"),
    path("learners/<int:learner_id>/", views.LearnerForgetView.as_view(), name="learner-forget"),
    path("facts/<int:fact_id>/", views.FactDetailView.as_view(), name="fact-detail"),
    path("search/", views.GlobalSearchView.as_view(), name="search"),
]
