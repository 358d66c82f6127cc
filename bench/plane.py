"""Where a benchmark runs: the cluster the operator names, or a throwaway control plane.

Why one helper: bench/cache.py, bench/client.py and bench/memory.py each take `--kubeconfig`
to measure against a running cluster and otherwise start tests/testenv's control plane in a
temporary directory for the run alone; the start, the CRDs and the stop in every exit path are
the same in each.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

_T = TypeVar("_T")

__all__ = ["on_a_cluster"]


def on_a_cluster(
    kubeconfig: str | None,
    run: Callable[[str], _T],
    *,
    name: str,
    crds: bool = False,
    **plane: Any,
) -> _T:
    """`run(kubeconfig)` against `kubeconfig`, or, without one, against a control plane of
    its own (tests/testenv's `ControlPlane(**plane)`, with the project's CRDs if `crds`),
    stopped afterwards whatever happens."""
    if kubeconfig:
        return run(kubeconfig)
    from tests.integration.harness import install_crds
    from tests.testenv.controlplane import ControlPlane

    with (
        tempfile.TemporaryDirectory(prefix=f"spa-bench-{name}-") as workdir,
        ControlPlane(Path(workdir), **plane) as started,
    ):
        if crds:
            install_crds(started)
        return run(str(started.kubeconfig))
