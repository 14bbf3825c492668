{{/* The release's full name: the release name, or <release>-vigil when it does not contain "vigil". */}}
{{- define "vigil.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "vigil.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "vigil.labels" -}}
{{ include "vigil.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "vigil.serviceAccountName" -}}
{{- default (include "vigil.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{/* Vigil's image, pinned: the tag defaults to the chart's appVersion. */}}
{{- define "vigil.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The in-cluster URL of the Service: what scanner pods in any namespace reach. */}}
{{- define "vigil.serviceUrl" -}}
{{- printf "http://%s.%s.svc:%v" (include "vigil.fullname" .) .Release.Namespace .Values.service.port -}}
{{- end -}}

{{- define "vigil.publicUrl" -}}
{{- if .Values.publicUrl -}}
{{- .Values.publicUrl -}}
{{- else if .Values.ingress.enabled -}}
{{- printf "%s://%s" (ternary "https" "http" (ne .Values.ingress.tlsSecretName "")) .Values.ingress.host -}}
{{- else -}}
{{- include "vigil.serviceUrl" . -}}
{{- end -}}
{{- end -}}

{{/* Every namespace Vigil may write to, one per line: the release namespace (when it is a tenant) and tenants.namespaces. */}}
{{- define "vigil.tenantNamespaces" -}}
{{- $names := list -}}
{{- if .Values.tenants.releaseNamespace -}}{{- $names = append $names .Release.Namespace -}}{{- end -}}
{{- range .Values.tenants.namespaces -}}{{- $names = append $names .name -}}{{- end -}}
{{- $names | uniq | join "\n" -}}
{{- end -}}

{{/* The scanner Job settings as the JSON object VIGIL_JOB_SETTINGS_FILE holds (src/runtime/kubernetes/job-settings.ts). */}}
{{- define "vigil.jobSettings" -}}
{{- $jobs := .Values.jobs -}}
{{- $settings := dict
  "vigilImage" (include "vigil.image" .)
  "serviceAccountName" $jobs.serviceAccountName
  "activeDeadlineSeconds" $jobs.activeDeadlineSeconds
  "images" $jobs.images
  "resources" $jobs.resources
  "helperResources" $jobs.helperResources
  "outputSizeLimit" $jobs.outputSizeLimit
  "tmpSizeLimit" $jobs.tmpSizeLimit
  "scannerEnv" $jobs.scannerEnv
  "nodeSelector" $jobs.nodeSelector
  "tolerations" $jobs.tolerations
  "imagePullSecrets" (list)
  "podLabels" $jobs.podLabels
  "podAnnotations" $jobs.podAnnotations
-}}
{{- with $jobs.affinity -}}{{- $_ := set $settings "affinity" . -}}{{- end -}}
{{- with $jobs.priorityClassName -}}{{- $_ := set $settings "priorityClassName" . -}}{{- end -}}
{{- with .Values.caBundle.configMapName -}}{{- $_ := set $settings "caBundle" (dict "configMapName" . "key" $.Values.caBundle.key) -}}{{- end -}}
{{- range .Values.imagePullSecrets -}}
{{- $_ := set $settings "imagePullSecrets" (append (get $settings "imagePullSecrets") .name) -}}
{{- end -}}
{{- toPrettyJson $settings -}}
{{- end -}}

{{/* Where the caBundle ConfigMap is mounted in the Vigil pod; the same path as scanner Jobs use (CA_BUNDLE_DIR in job-manifest.ts). */}}
{{- define "vigil.caBundleFile" -}}
{{- printf "/etc/vigil/ca/%s" .Values.caBundle.key -}}
{{- end -}}
