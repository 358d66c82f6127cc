"""Kubeconfig files for the local control plane: one per identity and server URL.

Clients (the `kubernetes` package, kubectl, the controller under test) all take a kubeconfig,
so every identity a test needs, admin, a ServiceAccount token or the controller manager's
certificate, and every route, direct or through the fault-injecting proxy, is one file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def write_kubeconfig(
    path: Path,
    *,
    server: str,
    ca_cert: Path,
    user: str,
    client_cert: Path | None = None,
    client_key: Path | None = None,
    token: str | None = None,
    namespace: str | None = None,
) -> Path:
    """Write a single-context kubeconfig; exactly one of a client cert or a token is the user."""
    if (client_cert is None) == (token is None):
        raise ValueError("give either client_cert/client_key or token")
    credentials: dict[str, Any]
    if token is not None:
        credentials = {"token": token}
    else:
        credentials = {"client-certificate": str(client_cert), "client-key": str(client_key)}
    context: dict[str, Any] = {"cluster": "spa-testenv", "user": user}
    if namespace is not None:
        context["namespace"] = namespace
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "spa-testenv",
                "cluster": {"server": server, "certificate-authority": str(ca_cert)},
            }
        ],
        "users": [{"name": user, "user": credentials}],
        "contexts": [{"name": "spa-testenv", "context": context}],
        "current-context": "spa-testenv",
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written whole then renamed, so a reader never sees half a file.
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    tmp.chmod(0o600)
    tmp.replace(path)
    return path
