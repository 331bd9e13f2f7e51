"""Who may read and who may write.

Reading needs any authenticated user (the default IsAuthenticated). Writing needs the
model permission the view names (``write_permission``) or membership of the writers group,
which ``karani api-token --writer`` sets up.
"""

from typing import Any

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

WRITERS_GROUP = "karani-writers"
# What the writers group is granted: remember (add); correct and forget (change), as in the
# admin. Facts are never hard-deleted, so memory.delete_memory is not part of it.
WRITE_PERMISSIONS = ("memory.add_memory", "memory.change_memory")


def is_writer(user: Any, permission: str) -> bool:
    if not (user and user.is_authenticated and user.is_active):
        return False
    if user.has_perm(permission):
        return True
    return user.groups.filter(name=WRITERS_GROUP).exists()


class CanWriteMemory(BasePermission):
    message = (
        "writing memories needs the {perm} permission or membership of the "
        f"{WRITERS_GROUP!r} group"
    )

    def has_permission(self, request: Request, view: Any) -> bool:
        permission = view.write_permission
        if is_writer(request.user, permission):
            return True
        self.message = self.message.format(perm=permission)
        return False
