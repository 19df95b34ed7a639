from django.urls import path

from memory.api import batch, views

app_name = "memory"
# One style across /api/v1/: no trailing slash; learners and facts by UUID (bloom/urls.py answers the
# other spelling with a redirect or a 404 naming the right path).
urlpatterns = [
    path("learners/<uuid:research_id>/facts", views.LearnerFactsView.as_view(), name="learner-facts"),
    path("learners/<uuid:research_id>/facts/batch", batch.LearnerFactsBatchView.as_view(), name="learner-facts-batch"),
    path("learners/<uuid:research_id>/search", views.LearnerSearchView.as_view(), name="learner-search"),
    path("learners/<uuid:research_id>/context", views.LearnerContextView.as_view(), name="learner-context"),
    path("learners/<uuid:research_id>", views.LearnerForgetView.as_view(), name="learner-forget"),
    path("facts/<uuid:fact_id>", views.FactDetailView.as_view(), name="fact-detail"),
    path("facts/<uuid:fact_id>/history", views.FactHistoryView.as_view(), name="fact-history"),
    path("facts/<uuid:fact_id>/supersede", views.FactSupersedeView.as_view(), name="fact-supersede"),
    path("search", views.GlobalSearchView.as_view(), name="search"),
]
