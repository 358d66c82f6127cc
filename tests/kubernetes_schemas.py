"""Validation against the real Kubernetes API schemas that kubernetes-validate ships, strict, so
that an unknown or misplaced field fails (tests/unit/project/test_manifests.py for config/,
tests/packaging/test_helm.py for the chart)."""

from __future__ import annotations

import warnings
from typing import Any

with warnings.catch_warnings():
    # 1.25.x still imports distutils and pkg_resources.
    warnings.simplefilter("ignore", DeprecationWarning)
    from kubernetes_validate import utils as kubernetes_validate  # type: ignore[import-untyped]


def validate(document: dict[str, Any], version: str) -> str | None:
    """None if `document` is valid for Kubernetes `version` (such as "1.25"), else what is
    wrong with it; a kind unknown to that version is wrong, never skipped."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            kubernetes_validate.validate(document, version, strict=True)
        except kubernetes_validate.ValidationError as error:
            path = ".".join(str(p) for p in error.path)
            return f"{document['kind']}/{document['metadata']['name']}: {path}: {error.message}"
        except kubernetes_validate.SchemaNotFoundError as error:
            # A kind unknown to that version is a failure, never a skip.
            return str(error.message)
    return None
