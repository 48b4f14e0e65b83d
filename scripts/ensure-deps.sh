#!/usr/bin/env bash
# Installs the system packages the build and the tests need, only when missing.
# Usage: scripts/ensure-deps.sh [--python] [--browser]
#   --python   also installs pyzmq, msgpack and prometheus_client for Python
#   --browser  also installs Debian's chromium, chromium-driver and python3-selenium, for the
#              inspector's test in a real headless browser (run by /usr/bin/python3)
set -euo pipefail

python=false
browser=false
for flag in "$@"; do
    case "$flag" in
        --python) python=true ;;
        --browser) browser=true ;;
        *) echo "[deps] unknown option '$flag' (use --python and/or --browser)" >&2; exit 64 ;;
    esac
done

# libcurl: the Coordination module talks to etcd over HTTP; etcd-server: its tests run a real etcd.
packages=(libzmq3-dev libmsgpack-dev libmicrohttpd-dev libcurl4-openssl-dev etcd-server pkg-config)
if $browser; then packages+=(chromium chromium-driver python3-selenium); fi
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

if $python; then
    if ! python3 -c 'import zmq, msgpack, prometheus_client' >/dev/null 2>&1; then
        echo "[deps] installing Python packages pyzmq msgpack prometheus_client" >&2
        python3 -m pip install --quiet --disable-pip-version-check pyzmq msgpack prometheus_client
    fi
fi
