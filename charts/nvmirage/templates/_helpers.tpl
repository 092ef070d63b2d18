{{- define "nvmirage.name" -}}
{{- .Chart.Name -}}
{{- end -}}

{{- define "nvmirage.labels" -}}
app.kubernetes.io/name: {{ include "nvmirage.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{- define "nvmirage.selector" -}}
app.kubernetes.io/name: {{ include "nvmirage.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
