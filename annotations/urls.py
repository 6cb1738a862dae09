"""API routes of the annotations app, mounted under /api/v1/."""

urlpatterns: list = []
