from __future__ import annotations

from rest_framework.permissions import BasePermission

EXPORT_PERMISSION = "research.export_research_data"


class CanExportResearchData(BasePermission):
    """Staff AND the explicit export permission: being staff alone is not enough, because the
    export is a data release that an ethics approval usually names people for."""

    message = "Exporting research data needs staff status and the research.export_research_data permission."

    def has_permission(self, request, view) -> bool:
        user = request.user
        return bool(
            user and getattr(user, "is_staff", False) and user.is_active and user.has_perm(EXPORT_PERMISSION)
        )
