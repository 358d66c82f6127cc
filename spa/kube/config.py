"""Where a client finds its cluster: the controller tries its pod's ServiceAccount first, then a
kubeconfig; `kubectl spa` looks in kubeconfig files first, as kubectl does.

The ``kubernetes`` package's asyncio config loader (``kubernetes.aio.config``) reads the
kubeconfig or the in-cluster mount: server, CA, client certificates, tokens, exec plugins
(run as subprocesses on the loop) and token refresh. We keep its result and build our own
connection pool from it (:class:`spa.kube.KubeClient`), so none of that is hand-written.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from kubernetes.aio import config as k8s_config
from kubernetes.aio.client import Configuration
from kubernetes.aio.client.rest import RESTClientObject

from spa import __version__
from spa.kube.client import (
    DEFAULT_PAGE_LIMIT,
    DEFAULT_POOL_SIZE,
    DEFAULT_REQUEST_TIMEOUT,
    KubeClient,
)
from spa.kube.ratelimit import TokenBucket

__all__ = ["ConfigError", "connect", "context_names", "default_namespace"]

USER_AGENT = f"scheduled-pod-autoscaler/{__version__}"
# An exec plugin's token is renewed this long before it expires, so that no request is sent
# with a token that expires on the way.
_EXPIRY_MARGIN = timedelta(seconds=10)


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
    except Exception as err:  # the same file fails connect() with the full story
        raise ConfigError(f"no usable cluster configuration: {err}") from err
    chosen = next((c for c in contexts if c.get("name") == context), None) if context else current
    namespace = ((chosen or {}).get("context") or {}).get("namespace")
    return str(namespace) if namespace else "default"


def context_names(*, kubeconfig: str | None = None) -> list[str]:
    """The names of the kubeconfig's contexts, as kubectl completes `--context` with them;
    :class:`ConfigError` when the kubeconfig cannot be read."""
    try:
        contexts, _ = k8s_config.list_kube_config_contexts(  # type: ignore[no-untyped-call]
            config_file=_kubeconfig_path(kubeconfig)
        )
    except Exception as err:
        raise ConfigError(f"no usable cluster configuration: {err}") from err
    return [str(c["name"]) for c in contexts or () if c.get("name")]


class _ConfigurationCredentials:
    """The bearer token of a loaded configuration, refreshed the way the loader allows: the
    in-cluster loader installs a hook that re-reads the projected token every minute; an exec
    plugin whose token expires is run again."""

    def __init__(self, configuration: Any, loader: Any) -> None:
        self._configuration = configuration
        self._loader = loader
        self._token: str | None = None
        self._headers: Mapping[str, str] = {}

    async def headers(self) -> Mapping[str, str]:
        expiry = getattr(self._loader, "exec_plugin_expiry", None)
        if isinstance(expiry, datetime) and expiry - _EXPIRY_MARGIN <= datetime.now(UTC):
            await self._loader.load_and_set(self._configuration)
        token = await self._configuration.get_api_key_with_prefix(
            "BearerToken", alias="authorization"
        )
        if token != self._token:
            self._token = token
            self._headers = {"Authorization": token} if token else {}
        return self._headers


def _check_found(kubeconfig: str | None, *, in_cluster: bool) -> str:
    path = _kubeconfig_path(kubeconfig)
    if not in_cluster and not any(os.path.exists(part) for part in path.split(os.pathsep) if part):
        where = "" if kubeconfig else ", and not running in a pod"
        raise ConfigError(f"no usable cluster configuration: no kubeconfig at {path}{where}")
    return path


async def _load(
    kubeconfig: str | None, context: str | None, *, in_cluster_first: bool
) -> tuple[Any, Any]:
    """The loaded configuration and its loader. The order is: the explicit kubeconfig, then
    in-cluster, then ``$KUBECONFIG``, then ``~/.kube/config``; with ``in_cluster_first=False``
    (kubectl's order) in-cluster comes last."""
    configuration = Configuration()
    loader: Any = None
    in_cluster = _use_in_cluster(kubeconfig, in_cluster_first=in_cluster_first)
    path = _check_found(kubeconfig, in_cluster=in_cluster)
    try:
        if in_cluster:
            k8s_config.load_incluster_config(  # type: ignore[no-untyped-call]
                client_configuration=configuration
            )
        else:
            loader = await k8s_config.load_kube_config(  # type: ignore[no-untyped-call]
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
    return configuration, loader


async def connect(
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    qps: float | None = None,
    burst: int | None = None,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    pool_size: int = DEFAULT_POOL_SIZE,
    page_limit: int = DEFAULT_PAGE_LIMIT,
    in_cluster_first: bool = True,
) -> KubeClient:
    """Connect to the cluster (call it on the loop that will use the client); with ``qps``
    every request first takes a token from a bucket of size ``burst`` (default ``2 * qps``),
    like client-go's client-side rate limiter."""
    limiter = None
    if qps is not None:
        limiter = TokenBucket(qps=qps, burst=burst if burst is not None else max(1, int(2 * qps)))
    configuration, loader = await _load(kubeconfig, context, in_cluster_first=in_cluster_first)
    try:
        # The TLS settings exactly as the package's own asyncio client would use them (CA
        # file or data, client certificate, insecure-skip-tls-verify).
        ssl_context = RESTClientObject(configuration).ssl_context
    except (OSError, ValueError) as err:
        raise ConfigError(f"the cluster's TLS settings are unusable: {err}") from err
    return KubeClient(
        str(configuration.host),
        credentials=_ConfigurationCredentials(configuration, loader),
        ssl_context=ssl_context,
        tls_server_name=configuration.tls_server_name or None,
        proxy=configuration.proxy or None,
        user_agent=USER_AGENT,
        rate_limiter=limiter,
        request_timeout=request_timeout,
        page_limit=page_limit,
        pool_size=pool_size,
    )
