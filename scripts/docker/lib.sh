# shellcheck shell=bash
# shellcheck disable=SC2034  # variables used by the scripts that source this
# Shared helpers for the container scripts. Sourced, never run.

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DOCKER_SCRIPTS="$REPO_ROOT/scripts/docker"

# Image names, overridable so a user with a registry can tag for it.
BASE_IMAGE="${REACTORBUS_BASE_IMAGE:-reactorbus-base:bookworm}"
NODE_IMAGE="${REACTORBUS_IMAGE:-reactorbus/reactor-node:latest}"
PROMETHEUS_IMAGE="${REACTORBUS_PROMETHEUS_IMAGE:-reactorbus/prometheus:latest}"
ETCD_IMAGE="${REACTORBUS_ETCD_IMAGE:-reactorbus/etcd:latest}"

# Where ensure-engine.sh records a dockerd it started (pid file, flags, log),
# so that stop-engine.sh stops only that one.
ENGINE_STATE_DIR="${REACTORBUS_ENGINE_STATE_DIR:-/run/reactorbus-engine}"
ENGINE_PIDFILE="$ENGINE_STATE_DIR/dockerd.pid"
ENGINE_LOG="$ENGINE_STATE_DIR/dockerd.log"

LOG_TAG="${LOG_TAG:-docker}"

log() {
    printf '%s [%s] %s\n' "$(date -u +%H:%M:%S)" "$LOG_TAG" "$*" >&2
}

die() {
    log "ERROR: $*"
    exit 1
}

engine_up() {
    docker info >/dev/null 2>&1
}

# The pid of a dockerd we started, if it is still alive; empty otherwise.
our_dockerd_pid() {
    local pid
    [[ -r "$ENGINE_PIDFILE" ]] || return 0
    pid="$(cat "$ENGINE_PIDFILE" 2>/dev/null || true)"
    [[ "$pid" =~ ^[0-9]+$ ]] || return 0
    if [[ "$(cat "/proc/$pid/comm" 2>/dev/null || true)" == dockerd ]]; then
        echo "$pid"
    fi
}

# Runs the legacy builder: the Debian engine (20.10) has no buildx, and the
# classic builder never pulls a FROM image that exists locally.
docker_build() {
    DOCKER_BUILDKIT=0 docker build "$@"
}
