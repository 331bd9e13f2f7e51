"""Writing needs the view's ``write_permission`` or the writers group (``api-token --writer``)."""

from typing import Any

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

WRITERS_GROUP = "karani-writers"
# Remember (add); correct and forget (change), as in the admin. Facts are never hard-deleted.
WRITE_PERMISSIONS = ("memory.add_memory", "memory.change_memory")


class CanWriteMemory(BasePermission):
    # Listed after IsAuthenticated (DRF's authentication refuses inactive users); GET reads.
    def has_permission(self, request: Request, view: Any) -> bool:
        if request.method == "GET":
            return True
        permission = view.write_permission
        # What the refused request would have written, in the view's words ("recording decisions").
        action = getattr(view, "write_action", "writing memories")
        self.message = (
            f"{action} needs the {permission} permission or membership of the "
            f"{WRITERS_GROUP!r} group"
        )
        user = request.user
        # The group first: one indexed query, where has_perm loads every permission the user
        # holds (two joined queries), and `api-token --writer` tokens are in the group.
        return user.groups.filter(name=WRITERS_GROUP).exists() or user.has_perm(permission)
