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
