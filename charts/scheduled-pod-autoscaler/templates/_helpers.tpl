{{/*
Names and labels. A release named like the chart keeps the plain names of config/install
(scheduled-pod-autoscaler, scheduled-pod-autoscaler-metrics, ...); any other release name is
prefixed to them, so that two releases never share a cluster-scoped name.
*/}}
{{- define "spa.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "spa.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "spa.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The labels of every object: config/'s app.kubernetes.io/name plus Helm's own. */}}
{{- define "spa.labels" -}}
app.kubernetes.io/name: {{ include "spa.name" . }}
helm.sh/chart: {{ include "spa.chart" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* What the Deployment, its pods, the Service and the PodDisruptionBudget select on. */}}
{{- define "spa.selectorLabels" -}}
app.kubernetes.io/name: {{ include "spa.name" . }}
app.kubernetes.io/component: controller
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "spa.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "spa.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "spa.leaderElectionNamespace" -}}
{{- default .Release.Namespace .Values.leaderElection.namespace }}
{{- end }}

{{- define "spa.leaderElectionId" -}}
{{- default (printf "%s-leader" (include "spa.fullname" .)) .Values.leaderElection.id }}
{{- end }}

{{- define "spa.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag }}
{{- if .Values.image.digest }}
{{- printf "%s:%s@%s" .Values.image.repository $tag .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{/*
The controllers to deploy, as a YAML list of {name, args}: one without a name (not sharded),
one per entry of `shards` (by label), or `shardCount` of them (by namespace hash); the args are
the `spa run` flags of the shard (docs/runtime.md, "Shards").
*/}}
{{- define "spa.shards" -}}
{{- $shards := list }}
{{- if and .Values.shards (gt (int .Values.shardCount) 0) }}
{{- fail "shards and shardCount are two ways to shard (by label, by namespace hash): set one" }}
{{- end }}
{{- if .Values.shards }}
{{- $seen := dict }}
{{- range .Values.shards }}
{{- if hasKey $seen .name }}
{{- fail (printf "shards: the name %q is given twice; each shard has its own name and Lease" .name) }}
{{- end }}
{{- $_ := set $seen .name true }}
{{- $args := list (printf "--shard-name=%s" .name) }}
{{- with .selector }}
{{- $args = append $args (printf "--shard-selector=%s" .) }}
{{- end }}
{{- $shards = append $shards (dict "name" .name "args" $args) }}
{{- end }}
{{- else if gt (int .Values.shardCount) 0 }}
{{- $count := int .Values.shardCount }}
{{- range $k := until $count }}
{{- $args := list (printf "--shards=%d" $count) (printf "--shard=%d" $k) }}
{{- $shards = append $shards (dict "name" (printf "%d-of-%d" $k $count) "args" $args) }}
{{- end }}
{{- else }}
{{- $shards = list (dict "name" "" "args" list) }}
{{- end }}
{{- toYaml $shards }}
{{- end }}
