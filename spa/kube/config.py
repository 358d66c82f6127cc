"""Where the controller finds its cluster: in-cluster service account first, then kubeconfig.

Kept apart from the client so that tests (and the integration harness) can build a
:class:`KubeClient` from any configured ``ApiClient`` without touching the environment.
"""

from __future__ import annotations

import os
from typing import Any

from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from spa import __version__
from spa.kube.client import DEFAULT_REQUEST_TIMEOUT, KubeClient
from spa.kube.ratelimit import TokenBucket

__all__ = ["ConfigError", "api_client_for", "connect"]

# Watches each hold a pooled connection for minutes; the generated client's default pool
# (5 per CPU) would make workers open and drop extra connections on a 2-core machine.
DEFAULT_POOL_SIZE = 32
USER_AGENT = f"scheduled-pod-autoscaler/{__version__}"


class ConfigError(Exception):
    """No usable cluster configuration was found."""


def _in_cluster() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and os.path.exists(
        "/var/run/secrets/kubernetes.io/serviceaccount/token"
    )


def api_client_for(
    *, kubeconfig: str | None = None, context: str | None = None, pool_size: int = DEFAULT_POOL_SIZE
) -> Any:
    """Build a configured ``kubernetes.client.ApiClient`` (order: explicit kubeconfig, then
    in-cluster, then ``$KUBECONFIG``, then ``~/.kube/config``)."""
    configuration = k8s_client.Configuration()
    if kubeconfig and not os.path.exists(kubeconfig):
        raise ConfigError(f"no usable cluster configuration: {kubeconfig} does not exist")
    try:
        if kubeconfig:
            k8s_config.load_kube_config(  # type: ignore[no-untyped-call]
                config_file=kubeconfig,
                context=context,
                client_configuration=configuration,
                persist_config=False,
            )
        elif _in_cluster():
            k8s_config.load_incluster_config(  # type: ignore[no-untyped-call]
                client_configuration=configuration
            )
        else:
            path = os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
            k8s_config.load_kube_config(  # type: ignore[no-untyped-call]
                config_file=path,
                context=context,
                client_configuration=configuration,
                persist_config=False,
            )
    except (k8s_config.ConfigException, OSError) as err:
        raise ConfigError(f"no usable cluster configuration: {err}") from err
    except Exception as err:
        # The loader meets a malformed kubeconfig (broken YAML, a list where a map belongs)
        # with whatever its parsing raises; to the user it is the same problem.
        raise ConfigError(
            "no usable cluster configuration: the kubeconfig cannot be read "
            f"({type(err).__name__}: {' '.join(str(err).split())})"
        ) from err
    configuration.connection_pool_maxsize = pool_size
    # A watch whose peer vanished without a FIN or RST (a node gone, a NAT or load balancer
    # dropping idle flows) would otherwise be noticed only by its read timeout, 5 to 10 min
    # later; TCP keepalive with client-go's timings notices it within 30 s + 9 x 15 s.
    configuration.keep_alive = True
    api = k8s_client.ApiClient(configuration)
    api.user_agent = USER_AGENT
    return api


def connect(
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    qps: float | None = None,
    burst: int | None = None,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    pool_size: int = DEFAULT_POOL_SIZE,
) -> KubeClient:
    """Connect to the cluster; with ``qps`` every request first takes a token from a bucket
    of size ``burst`` (default ``2 * qps``), like client-go's client-side rate limiter."""
    limiter = None
    if qps is not None:
        limiter = TokenBucket(qps=qps, burst=burst if burst is not None else max(1, int(2 * qps)))
    api = api_client_for(kubeconfig=kubeconfig, context=context, pool_size=pool_size)
    return KubeClient(api, rate_limiter=limiter, request_timeout=request_timeout)
