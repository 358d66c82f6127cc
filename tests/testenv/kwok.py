"""Fake nodes and the pod lifecycle for the test control plane, played by kwok.

Without a kubelet a scheduled pod stays `Pending` forever, so no test could ever see the
capacity a scaling decision buys. kwok (sigs.k8s.io/kwok) watches the Nodes and Pods the real
kube-scheduler works with and writes their status the way a kubelet would, following the
*stages* below: a node becomes Ready, a pod bound to one of its nodes becomes Running and Ready
after the start-up delay the pod asks for, and a deleted pod goes away. Everything else (the
scheduler's fit checks against node capacity, the ReplicaSet's counting of ready pods, the HPA)
is the release's own code.

The stages are written here rather than taken from kwok's examples so that exactly one knob
exists and is documented: the pod annotation `START_DELAY_ANNOTATION` (a Go duration, "20s").
A pod's `PodScheduled` condition is kept as the binding left it, as a kubelet keeps it (its
status manager moves a condition's `lastTransitionTime` only when the status changes). Set anew
with the others when the pod starts, as this stage did before, a pod's scheduling time was its
start time, and how long it waited for a node (status.windows[].podsWaitedSeconds, measured
from that time) the wait plus its start delay.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

# A pod (template) annotation: how long after it is bound to a node the pod becomes Ready.
START_DELAY_ANNOTATION = "spa-testenv/start-delay"
# kwok manages the nodes that carry this annotation (and no others).
NODE_ANNOTATION = "kwok.x-k8s.io/node"
NODE_ANNOTATION_VALUE = "fake"
NODE_SELECTOR = f"{NODE_ANNOTATION}={NODE_ANNOTATION_VALUE}"
# A common cloud worker (4 vCPU / 16 GiB) with the kubelet's default pod limit.
NODE_CAPACITY: Mapping[str, str] = {
    "cpu": "4",
    "memory": "16Gi",
    "pods": "110",
    "ephemeral-storage": "100Gi",
}
NODE_NAME_PREFIX = "kwok-node-"

_NODE_READY_TEMPLATE = """\
{{ $now := Now }}
conditions:
- type: Ready
  status: "True"
  reason: KubeletReady
  message: kwok plays this node's kubelet
  lastHeartbeatTime: {{ $now | Quote }}
  lastTransitionTime: {{ $now | Quote }}
{{ range list "MemoryPressure" "DiskPressure" "PIDPressure" }}
- type: {{ . }}
  status: "False"
  reason: KubeletHasSufficientResources
  message: kwok plays this node's kubelet
  lastHeartbeatTime: {{ $now | Quote }}
  lastTransitionTime: {{ $now | Quote }}
{{ end }}
nodeInfo:
  architecture: amd64
  operatingSystem: linux
  kubeletVersion: {{ printf "kwok-%s" Version | Quote }}
  containerRuntimeVersion: {{ printf "kwok-%s" Version | Quote }}
  kernelVersion: ""
  kubeProxyVersion: ""
  osImage: ""
  machineID: ""
  systemUUID: ""
  bootID: ""
phase: Running
"""

_POD_READY_TEMPLATE = """\
{{ $now := Now }}
phase: Running
startTime: {{ $now | Quote }}
conditions:
{{ range .status.conditions }}{{ if eq .type "PodScheduled" }}
- type: PodScheduled
  status: {{ .status | Quote }}
  lastTransitionTime: {{ .lastTransitionTime | Quote }}
{{ end }}{{ end }}
{{ range list "Initialized" "ContainersReady" "Ready" }}
- type: {{ . }}
  status: "True"
  lastTransitionTime: {{ $now | Quote }}
{{ end }}
containerStatuses:
{{ range .spec.containers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  imageID: ""
  ready: true
  started: true
  restartCount: 0
  state:
    running:
      startedAt: {{ $now | Quote }}
{{ end }}
"""


def _stage(name: str, kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "Stage",
        "metadata": {"name": name},
        "spec": {"resourceRef": {"apiGroup": "v1", "kind": kind}, **spec},
    }


def _is(key: str, operator: str, *values: str) -> dict[str, Any]:
    requirement: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        requirement["values"] = list(values)
    return {"jq": requirement}


def stages() -> list[dict[str, Any]]:
    """The three stages: node ready, pod ready (after its start delay), deleted pod gone."""
    ready_status = '.status.conditions.[] | select( .type == "Ready" ) | .status'
    return [
        _stage(
            "node-ready",
            "Node",
            {
                "selector": {"matchExpressions": [_is(ready_status, "NotIn", "True")]},
                "next": {"statusTemplate": _NODE_READY_TEMPLATE},
            },
        ),
        _stage(
            "pod-ready",
            "Pod",
            {
                "selector": {
                    "matchExpressions": [
                        _is(".metadata.deletionTimestamp", "DoesNotExist"),
                        _is(".status.phase", "In", "Pending"),
                    ]
                },
                # No annotation: Ready at once. A malformed one is ignored by kwok (no delay).
                "delay": {
                    "durationFrom": {
                        "jq": {"expression": f'.metadata.annotations["{START_DELAY_ANNOTATION}"]'}
                    }
                },
                "next": {"statusTemplate": _POD_READY_TEMPLATE},
            },
        ),
        # Without a kubelet nobody confirms a graceful deletion: the pod would stay
        # Terminating and the ReplicaSet would count it against its replicas.
        _stage(
            "pod-delete",
            "Pod",
            {
                "selector": {"matchExpressions": [_is(".metadata.deletionTimestamp", "Exists")]},
                "next": {"delete": True},
            },
        ),
    ]


def config_yaml() -> str:
    """kwok's `--config` file: the stages, one YAML document each."""
    return yaml.safe_dump_all(stages(), sort_keys=False)


def node_manifest(index: int) -> dict[str, Any]:
    """A fake worker node: kwok's annotation, the usual well-known labels, its capacity.

    The capacity is part of the object as a kubelet registers it (a Node's status is kept on
    create); kwok's stage then only adds the Ready condition.
    """
    name = f"{NODE_NAME_PREFIX}{index}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {NODE_ANNOTATION: NODE_ANNOTATION_VALUE},
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "type": "kwok",
            },
        },
        "status": {"capacity": dict(NODE_CAPACITY), "allocatable": dict(NODE_CAPACITY)},
    }
