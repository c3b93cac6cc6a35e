#!/usr/bin/env bash
# Validates every manifest in this folder against the Kubernetes API's own schemas, offline:
# PyPI's kubernetes-validate ships the OpenAPI-derived JSON schemas of each Kubernetes release,
# and --strict also refuses fields the API does not have. Checked against the newest release it
# ships and against 1.29 (an older cluster). Installs it into target/k8s-validate once.
# .ci/run runs this script.
set -euo pipefail
cd "$(dirname "$0")"
root="$(cd ../.. && pwd)"
venv="$root/target/k8s-validate"
version=1.37.0
if ! "$venv/bin/kubernetes-validate" --version 2>/dev/null | grep -q "$version"; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "kubernetes-validate==$version"
fi
kv="$venv/bin/kubernetes-validate"
for k in 1.37.0 1.29.0; do
  "$kv" --strict --quiet -k "$k" ./*.yaml
done
# The check can fail: a manifest with a field the API lacks is refused.
bad="$(mktemp --suffix=.yaml)"
trap 'rm -f "$bad"' EXIT
sed 's/^\( *\)imagePullPolicy: IfNotPresent/&\n\1imagePullPolicys: IfNotPresent/' merge-job.yaml >"$bad"
if "$kv" --strict --quiet "$bad" >/dev/null 2>&1; then
  echo "kubernetes-validate accepted a manifest with an unknown field" >&2
  exit 1
fi
echo "kubernetes manifests: $(ls ./*.yaml | wc -l) valid against Kubernetes 1.37 and 1.29 (strict)"
