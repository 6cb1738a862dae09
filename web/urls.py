"""The pages for people, mounted at the site root."""

from django.urls import path

from web.views import compare, documents, gold, members, projects, runs

app_name = "web"

urlpatterns = [
    path("", projects.home, name="home"),
    path("projects/<slug:slug>/", projects.project_detail, name="project"),
    path("projects/<slug:slug>/members/", members.member_list, name="members"),
    path("projects/<slug:slug>/gold/<int:a>/diff/<int:b>/", gold.gold_diff, name="gold-diff"),
    path("runs/<int:run_id>/", runs.run_detail, name="run"),
    path("runs/<int:run_id>/documents/<path:external_id>/", documents.document_detail, name="document"),
    path("compare/", compare.compare_runs, name="compare"),
]
