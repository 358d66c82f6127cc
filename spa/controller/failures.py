"""Why a cluster cannot be used: one line that says what failed, and its exit status.

Shared by `spa run`'s start-up check (spa.controller.main) and the commands that read a
cluster (spa.cli), so that the same failure reads the same everywhere and ends with the same
status (docs/operations.md, "Exit codes"). Kept apart from `spa run`'s entry point so that the
command line does not import the controller's manager to explain a failure.
"""

from __future__ import annotations

from spa.controller.exitcodes import (
    EXIT_FORBIDDEN,
    EXIT_NO_CRDS,
    EXIT_UNAUTHORIZED,
    EXIT_UNREACHABLE,
)
from spa.controller.resources import (
    CALENDARS,
    CLUSTER_CALENDARS,
    SCHEDULED_POD_AUTOSCALERS,
    SCHEDULES,
)
from spa.kube import ApiError, ApiUnavailable, Forbidden, NotFound, Resource

__all__ = ["ClusterFailure", "explain"]


class ClusterFailure(Exception):
    """Why the cluster cannot be used, and the exit status that says so."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def explain(
    server: str,
    error: ApiUnavailable | ApiError,
    resource: Resource,
    *,
    action: str = "list",
    where: str = "",
    rbac_hint: str = "",
) -> ClusterFailure:
    """The failure of `action` on `resource` in words and an exit status (docs/operations.md,
    "Exit codes"); shared by `spa run` and the commands that read a cluster."""
    subject = f"{action} {resource}{f' {where}' if where else ''}"
    if isinstance(error, ApiUnavailable):
        return ClusterFailure(
            EXIT_UNREACHABLE, f"cannot reach the API server at {server}: {error.cause}"
        )
    if error.status == 401:
        return ClusterFailure(
            EXIT_UNAUTHORIZED,
            f"the API server at {server} does not accept the credentials (401 Unauthorized)",
        )
    if isinstance(error, Forbidden):
        hint = f" ({rbac_hint})" if rbac_hint else ""
        return ClusterFailure(EXIT_FORBIDDEN, f"not allowed to {subject}: {error.message}{hint}")
    if isinstance(error, NotFound) and resource in (
        SCHEDULED_POD_AUTOSCALERS,
        SCHEDULES,
        CALENDARS,
        CLUSTER_CALENDARS,
    ):
        return ClusterFailure(
            EXIT_NO_CRDS,
            f"the API server at {server} does not serve {resource}: install the CRDs "
            "(config/crd or config/install/install.yaml)",
        )
    return ClusterFailure(
        EXIT_UNREACHABLE,
        f"the API server at {server} answered {error.status} {error.reason} to {subject}: "
        f"{error.message}",
    )
