{{/*
The image both workloads run: repository@digest when a digest is given (what the registry serves under
that digest, whatever the tag says now), else repository:tag, the tag defaulting to the chart's
appVersion (package.json's version, as manifests/kustomization.yaml's newTag).
*/}}
{{- define "proxyscope.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/*
The monitoring mixin: fills the placeholders of files/proxyscope-rules.yaml or files/proxyscope-dashboard.json
(copies of mixin/) from .Values.monitoring, as scripts/mixin.mjs does. Called with (list $ "file" json?):
for the dashboard the values land inside JSON strings, so they are escaped as JSON.
*/}}
{{- define "proxyscope.mixin" -}}
{{- $root := index . 0 -}}
{{- $json := index . 2 -}}
{{- $m := $root.Values.monitoring -}}
{{- $l := $m.clusterLabel -}}
{{- $values := dict
  "__AGENT_SELECTOR__" $m.selector.agent
  "__COLLECTOR_SELECTOR__" $m.selector.collector
  "__CLUSTER_COMMA__" (ternary (printf "%s, " $l) "" $m.multiCluster)
  "__BY_CLUSTER__" (ternary (printf " by (%s) " $l) "" $m.multiCluster)
  "__CLUSTER_LEGEND__" (ternary (printf "{{%s}}/" $l) "" $m.multiCluster) -}}
{{- $text := $root.Files.Get (index . 1) -}}
{{- range $k, $v := $values -}}
{{- if $json -}}{{- $v = $v | toJson | trimPrefix "\"" | trimSuffix "\"" -}}{{- end -}}
{{- $text = $text | replace $k $v -}}
{{- end -}}
{{- $text -}}
{{- end -}}
