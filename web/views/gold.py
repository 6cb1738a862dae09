"""`/projects/<slug>/gold/<a>/diff/<b>/`: what changed in the gold from version a to version b, as
`GET /api/v1/projects/{slug}/gold/versions/{a}/diff/{b}/` answers it: the same checks
(`gold_diff_versions`), the same reads (`metrics.services.gold_diff`, which leaves held-back documents out) and
the same keyset pages of documents."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from rest_framework.request import Request

from evalproject.api import query_parameter_names, query_parameters_check
from metrics.api.gold import GoldVersionDiffApi, gold_diff_versions
from metrics.services.gold_diff import gold_diff_documents, gold_diff_entries, gold_diff_summary
from web.pages import page


@page
def gold_diff(request: HttpRequest, slug: str, a: int, b: int) -> HttpResponse:
    query_parameters_check(request.GET, known=query_parameter_names(GoldVersionDiffApi, "get"))
    kind, versions = gold_diff_versions(user=request.user, slug=slug, a=a, b=b, query_params=request.GET)
    version_a, version_b = versions[a], versions[b]
    documents, status = gold_diff_documents(version_a=version_a, version_b=version_b)
    paginator = GoldVersionDiffApi.Pagination()
    documents_page = paginator.paginate_queryset(documents, Request(request))
    entries = list(
        gold_diff_entries(version_a=version_a, version_b=version_b, documents=documents_page, status=status)
    )
    summary = gold_diff_summary(version_a=version_a, version_b=version_b, documents=documents, status=status)
    query = request.GET.urlencode()
    return render(
        request,
        "web/gold_diff.html",
        {
            "project": version_a.project,
            "kind": kind,
            "a": a,
            "b": b,
            "summary": summary,
            "per_key": summary.get("per_type", summary.get("per_attribute", {})),
            "entries": entries,
            "next": paginator.get_next_link(),
            "previous": paginator.get_previous_link(),
            "api": reverse("gold-version-diff", args=[slug, a, b]) + (f"?{query}" if query else ""),
        },
    )
