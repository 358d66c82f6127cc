"""Exit statuses of `spa run` and of the commands that read a cluster (docs/operations.md,
"Exit codes"). Kept apart from the controller so that the command line can name them without
importing the Kubernetes client."""

from __future__ import annotations

__all__ = [
    "EXIT_CONFIG",
    "EXIT_FORBIDDEN",
    "EXIT_LOST_LEASE",
    "EXIT_NO_CRDS",
    "EXIT_UNAUTHORIZED",
    "EXIT_UNREACHABLE",
    "EXIT_USAGE",
]

EXIT_LOST_LEASE = 1
"""The Lease was lost (docs/operations.md, "Leader election"); 1 is also any other error."""
EXIT_USAGE = 2
"""Bad command-line arguments: argparse's status, and that of an argument only the API server
can judge (a label selector, docs/status.md)."""
EXIT_CONFIG = 3
"""No usable cluster configuration (kubeconfig or in-cluster)."""
EXIT_UNREACHABLE = 4
"""The API server does not answer, or answers with an error of its own."""
EXIT_UNAUTHORIZED = 5
"""The API server does not accept the credentials (401)."""
EXIT_FORBIDDEN = 6
"""RBAC does not allow a list the command needs (403)."""
EXIT_NO_CRDS = 7
"""The API server does not serve ScheduledPodAutoscalers or Schedules: the CRDs are missing."""
