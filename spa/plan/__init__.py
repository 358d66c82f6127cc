"""`spa plan`: an offline preview of what the controller will do with a set of manifests."""

from spa.plan.html import render_html
from spa.plan.manifests import Document, ReadError, read_documents
from spa.plan.planner import AutoscalerPlan, Plan, PlanError, SkippedWindow, build_plan
from spa.plan.render import (
    render_errors,
    render_json,
    render_table,
    render_warnings,
    render_yaml,
)

__all__ = [
    "AutoscalerPlan",
    "Document",
    "Plan",
    "PlanError",
    "ReadError",
    "SkippedWindow",
    "build_plan",
    "read_documents",
    "render_errors",
    "render_html",
    "render_json",
    "render_table",
    "render_warnings",
    "render_yaml",
]
