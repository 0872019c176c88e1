#!/usr/bin/env bash
# Validate deploy/k8s/ against the Kubernetes API schemas with kubernetes-validate (PyPI; it
# ships the JSON schemas, so no cluster and no download at validation time), strictly
# (unknown fields are errors), for the oldest and the newest Kubernetes release we support;
# then the cross-checks of deploy/k8s/check.py. The tool is installed once into a cached
# virtual environment ($SERVEBENCH_TOOLS, default ~/.cache/servebench-tools), pinned.
set -euo pipefail
cd "$(dirname "$0")/.."
version=1.37.0
tools="${SERVEBENCH_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/servebench-tools}"
venv="$tools/kubernetes-validate-$version"
kv="$venv/bin/kubernetes-validate"
if ! "$kv" --version 2>/dev/null | grep -qF "$version"; then
    echo "validate-k8s: installing kubernetes-validate $version into $venv"
    rm -rf "$venv"
    mkdir -p "$tools"
    python3 -m venv "$venv"
    for attempt in 1 2 3; do
        if "$venv/bin/pip" install --quiet --disable-pip-version-check --retries 5 \
            --timeout 60 "kubernetes-validate==$version"; then
            break
        fi
        if [ "$attempt" = 3 ]; then
            echo "validate-k8s: cannot install kubernetes-validate $version from PyPI" >&2
            rm -rf "$venv"
            exit 1
        fi
        sleep $((attempt * 5))
    done
fi
manifests=(deploy/k8s/shards/*.yaml deploy/k8s/merge/*.yaml)
for k8s in 1.29.0 1.37.0; do
    "$kv" --strict --quiet --kubernetes-version "$k8s" "${manifests[@]}"
done
echo "validate-k8s: ${#manifests[@]} manifests valid (strict) for Kubernetes 1.29 and 1.37"
"$venv/bin/python" deploy/k8s/check.py deploy/k8s
