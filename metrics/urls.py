"""API routes of the metrics app, mounted under /api/v1/."""

urlpatterns: list = []
