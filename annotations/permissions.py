"""API-wide permission: a read-only token can read, never write."""

from rest_framework.permissions import SAFE_METHODS, BasePermission

from annotations.models import ApiToken


class ReadOnlyTokenCannotWrite(BasePermission):
    message = "This API token is read-only."

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS:
            return True
        return not (isinstance(request.auth, ApiToken) and request.auth.read_only)
