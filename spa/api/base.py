"""The common configuration of every API model: camelCase JSON names, no unknown fields, and
types as strict as the CRD schema.

Unknown fields are errors rather than silently dropped, because a typo in a manifest kept in
Git (`minReplica: 5`) would otherwise do nothing without anyone noticing; the API server's
strict field validation reports them the same way. Types are strict for the same reason: the
API server refuses `minReplicas: "5"` and `suspend: "yes"`, so a model that converted them would
call a manifest valid that `kubectl apply` then rejects. Validation runs in pydantic's JSON mode
(`spa.api.validation.parse`), where strict still reads an enum from its string.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class ApiModel(BaseModel):
    """A part of a Kubernetes object, with the field names it has on the wire."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        strict=True,
        frozen=True,
        use_attribute_docstrings=True,
    )

    def to_wire(self) -> dict[str, Any]:
        """The JSON form, as the API server stores it: camelCase, unset fields left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class LenientModel(ApiModel):
    """A part written by servers and controllers (metadata, status): unknown fields are kept
    out of the way rather than rejected, so a newer writer never makes an object unreadable."""

    model_config = ConfigDict(extra="ignore")
