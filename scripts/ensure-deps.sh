#!/usr/bin/env bash
# Installs the system packages the build and the tests need, only when missing.
# Usage: scripts/ensure-deps.sh [--python]   (--python also installs pyzmq, msgpack and prometheus_client for Python)
set -euo pipefail

packages=(libzmq3-dev libmsgpack-dev libmicrohttpd-dev pkg-config)
missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "[deps] installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [[ "${1:-}" == "--python" ]]; then
    if ! python3 -c 'import zmq, msgpack, prometheus_client' >/dev/null 2>&1; then
        echo "[deps] installing Python packages pyzmq msgpack prometheus_client" >&2
        python3 -m pip install --quiet --disable-pip-version-check pyzmq msgpack prometheus_client
    fi
fi
