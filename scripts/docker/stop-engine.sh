#!/usr/bin/env bash
# Stops the dockerd that ensure-engine.sh started, and only that one: an
# engine that was already running (a system service, a developer's own) is
# left alone. Containers should be removed before (compose down).
#
# Usage: scripts/docker/stop-engine.sh
set -euo pipefail
LOG_TAG=engine
# shellcheck source=scripts/docker/lib.sh
source "$(dirname "$0")/lib.sh"

pid="$(our_dockerd_pid)"
if [[ -z "$pid" ]]; then
    if [[ -f "$ENGINE_PIDFILE" ]]; then
        log "recorded dockerd is gone already; removing the stale record"
        rm -f "$ENGINE_PIDFILE"
    else
        log "no dockerd started by these scripts; nothing to stop"
    fi
    exit 0
fi

# dockerd's own containerd child, to make sure it goes too if dockerd has to
# be killed hard.
containerd_pid="$(cat /var/run/docker/containerd/containerd.pid 2>/dev/null || true)"

log "stopping dockerd (pid $pid)"
kill -TERM "$pid" 2>/dev/null || true
for ((i = 0; i < 60; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
done
if kill -0 "$pid" 2>/dev/null; then
    log "dockerd did not exit within 30s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
    sleep 1
fi
if [[ "$containerd_pid" =~ ^[0-9]+$ ]] && [[ "$(cat "/proc/$containerd_pid/comm" 2>/dev/null || true)" == containerd ]]; then
    log "stopping dockerd's containerd (pid $containerd_pid)"
    kill -TERM "$containerd_pid" 2>/dev/null || true
    for ((i = 0; i < 20; i++)); do
        kill -0 "$containerd_pid" 2>/dev/null || break
        sleep 0.5
    done
    kill -KILL "$containerd_pid" 2>/dev/null || true
fi
rm -f "$ENGINE_PIDFILE"
log "dockerd stopped"
