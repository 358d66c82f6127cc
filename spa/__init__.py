"""scheduled-pod-autoscaler: raise HorizontalPodAutoscaler bounds ahead of known traffic peaks.

Layers, lowest first (checked by import-linter, see setup.cfg):
``spa.schedule`` (pure time-window engine) < ``spa.api`` (resource models) and ``spa.kube``
(the only code that talks to the Kubernetes API) < ``spa.runtime`` (generic controller runtime)
and ``spa.plan`` (offline preview) < ``spa.controller`` (the SPA reconciler) < ``spa.cli``.
"""

__version__ = "0.2.0"
