"""The ``kubernetes`` package's asyncio config loader without the rest of the package.

Why: ``import kubernetes.aio.config`` first runs the ``__init__`` of ``kubernetes`` and of
``kubernetes.aio``, which import the whole blocking client, both clients' dynamic clients (with
``jsonschema``), streams, watches and utilities: about 580 modules and 15 MiB of the
controller's RSS (its imports: 68.6 MiB before, 53.5 MiB after, 2026-11-25; docs/performance.md,
"Beside the original Go controller"), although spa.kube uses only the config loader,
``Configuration`` and ``RESTClientObject`` (spa/kube/config.py; docs/architecture.md, "The
client").

So, when nothing has imported ``kubernetes`` yet, those packages are registered with their
real search paths and their ``__init__`` deferred: a submodule still loads from the package's
own files, and the first access to any other name of such a package runs its real
``__init__`` then (a module ``__getattr__``, PEP 562), so code that wants the whole client
(the tests' sync client, the benchmarks) still gets exactly it. Imported first by
``spa/kube/__init__.py``, for its effect.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType
from typing import Any

# Each after its parent. The two whose __init__ import the other subpackages: `kubernetes` the
# whole blocking client, `dynamic` (with jsonschema), `stream`, `watch` ...; `kubernetes.aio`
# the same of the asyncio client. `kubernetes.aio.client`, which the loader needs, is left to
# load whole: deferring it as well saved 1.4 MiB more, not worth its loader's special cases.
DEFERRED = ("kubernetes", "kubernetes.aio")


def _defer(name: str) -> ModuleType:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        raise ImportError(f"{name} is not a package here")
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader

    def initialise(attribute: str) -> Any:
        # `from package import submodule` asks the package for the name first: a submodule is
        # imported alone, as it would be from a package that had run its __init__.
        if importlib.util.find_spec(f"{name}.{attribute}") is not None:
            return importlib.import_module(f"{name}.{attribute}")
        # Removed before the real __init__ runs: a name it does not define then fails as usual.
        del module.__dict__["__getattr__"]
        loader.exec_module(module)
        return getattr(module, attribute)

    module.__dict__["__getattr__"] = initialise
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)
    return module


def defer_package_inits() -> bool:
    """Register the deferred packages; False (and nothing done) if `kubernetes` is imported."""
    if "kubernetes" in sys.modules:
        return False
    for name in DEFERRED:
        _defer(name)
    return True


defer_package_inits()
