"""API routes of the experiments app, mounted under /api/v1/."""

urlpatterns: list = []
