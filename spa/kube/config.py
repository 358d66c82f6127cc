"""Where a client finds its cluster: the controller tries its pod's ServiceAccount first, then a
kubeconfig; `kubectl spa` looks in kubeconfig files first, as kubectl does.

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

__all__ = ["ConfigError", "api_client_for", "connect", "default_namespace"]

# Watches each hold a pooled connection for minutes; the generated client's default pool
# (5 per CPU) would make workers open and drop extra connections on a 2-core machine.
DEFAULT_POOL_SIZE = 32
USER_AGENT = f"scheduled-pod-autoscaler/{__version__}"


class ConfigError(Exception):
    """No usable cluster configuration was found."""


_SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


def _in_cluster() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and os.path.exists(
        f"{_SERVICE_ACCOUNT}/token"
    )


def _kubeconfig_path(kubeconfig: str | None) -> str:
    """The kubeconfig to read: the explicit one, else `$KUBECONFIG` (a list of files is merged
    by the loader, as kubectl merges it), else `~/.kube/config`."""
    return kubeconfig or os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")


def _use_in_cluster(kubeconfig: str | None, *, in_cluster_first: bool) -> bool:
    """The controller prefers its pod's ServiceAccount; kubectl (and `kubectl spa`) prefer a
    kubeconfig and fall back to the ServiceAccount only when there is none."""
    if kubeconfig or not _in_cluster():
        return False
    if in_cluster_first:
        return True
    paths = _kubeconfig_path(None).split(os.pathsep)
    return not any(path and os.path.exists(path) for path in paths)


def api_client_for(
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    pool_size: int = DEFAULT_POOL_SIZE,
    in_cluster_first: bool = True,
) -> Any:
    """Build a configured ``kubernetes.client.ApiClient``. The order is: the explicit
    kubeconfig, then in-cluster, then ``$KUBECONFIG``, then ``~/.kube/config``; with
    ``in_cluster_first=False`` (kubectl's order) in-cluster comes last."""
    configuration = k8s_client.Configuration()
    in_cluster = _use_in_cluster(kubeconfig, in_cluster_first=in_cluster_first)
    path = _kubeconfig_path(kubeconfig)
    if not in_cluster and not any(os.path.exists(part) for part in path.split(os.pathsep) if part):
        where = "" if kubeconfig else ", and not running in a pod"
        raise ConfigError(f"no usable cluster configuration: no kubeconfig at {path}{where}")
    try:
        if in_cluster:
            k8s_config.load_incluster_config(  # type: ignore[no-untyped-call]
                client_configuration=configuration
            )
        else:
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


def default_namespace(*, kubeconfig: str | None = None, context: str | None = None) -> str:
    """The namespace kubectl would use without `-n`: the context's namespace in the
    kubeconfig, else the pod's own namespace when running in a cluster, else `default`."""
    if _use_in_cluster(kubeconfig, in_cluster_first=False):
        try:
            with open(f"{_SERVICE_ACCOUNT}/namespace", encoding="utf-8") as mounted:
                return mounted.read().strip() or "default"
        except OSError:
            return "default"
    try:
        contexts, current = k8s_config.list_kube_config_contexts(  # type: ignore[no-untyped-call]
            config_file=_kubeconfig_path(kubeconfig)
        )
    except Exception as err:  # the same file fails api_client_for with the full story
        raise ConfigError(f"no usable cluster configuration: {err}") from err
    chosen = next((c for c in contexts if c.get("name") == context), None) if context else current
    namespace = ((chosen or {}).get("context") or {}).get("namespace")
    return str(namespace) if namespace else "default"


def connect(
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    qps: float | None = None,
    burst: int | None = None,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    pool_size: int = DEFAULT_POOL_SIZE,
    in_cluster_first: bool = True,
) -> KubeClient:
    """Connect to the cluster; with ``qps`` every request first takes a token from a bucket
    of size ``burst`` (default ``2 * qps``), like client-go's client-side rate limiter."""
    limiter = None
    if qps is not None:
        limiter = TokenBucket(qps=qps, burst=burst if burst is not None else max(1, int(2 * qps)))
    api = api_client_for(
        kubeconfig=kubeconfig,
        context=context,
        pool_size=pool_size,
        in_cluster_first=in_cluster_first,
    )
    return KubeClient(api, rate_limiter=limiter, request_timeout=request_timeout)
