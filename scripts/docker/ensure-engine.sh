#!/usr/bin/env bash
# Makes a Docker engine usable here: installs docker.io, docker-compose and
# debootstrap from Debian when missing, and starts dockerd when `docker info`
# fails. A dockerd started here is recorded in $ENGINE_PIDFILE so that
# stop-engine.sh stops it and nothing else.
#
# dockerd is tried with a ladder of settings, from the stock one to the most
# conservative, because sandboxes differ in what they allow (netfilter,
# overlayfs). The first one that answers `docker info` wins and is logged.
#
# Usage: scripts/docker/ensure-engine.sh
# Env:   REACTORBUS_DOCKERD_FLAGS  extra flags for every dockerd attempt
#        REACTORBUS_ENGINE_WAIT    seconds to wait for each attempt (default 60)
set -euo pipefail
LOG_TAG=engine
# shellcheck source=scripts/docker/lib.sh
source "$(dirname "$0")/lib.sh"

install_missing() {
    local missing=()
    command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
    command -v docker >/dev/null 2>&1 || missing+=(docker.io)
    command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
    command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
    ((${#missing[@]})) || return 0
    # De-duplicate (docker.io may be listed twice).
    mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
    log "installing ${missing[*]} (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" ca-certificates >/dev/null
    log "installed: $(dockerd --version 2>/dev/null | head -n1); $(docker-compose --version 2>/dev/null | head -n1)"
}

# The reason dockerd gave for not starting (its last error lines).
show_startup_error() {
    local errs
    # Only the last attempt's section of the log (sections start with ===).
    # shellcheck disable=SC2016  # sed's own $, not the shell's
    errs="$(sed -n '/^=== /h; /^=== /!H; ${x; p}' "$ENGINE_LOG" \
        | grep -E 'level=(error|fatal)|^failed to start' | tail -n 5)"
    if [[ -n "$errs" ]]; then
        printf '    %s\n' "${errs//$'\n'/$'\n'    }" >&2
    else
        tail -n 5 "$ENGINE_LOG" | sed 's/^/    /' >&2
    fi
}

# Starts dockerd with the given flags, detached from our process group (so a
# Ctrl-C of a test does not take the engine down before its cleanup ran).
# Returns 0 once `docker info` answers, 1 if dockerd died or timed out (then
# it is stopped again).
try_dockerd() {
    local wait_s="${REACTORBUS_ENGINE_WAIT:-60}" pid launcher i
    # A dockerd that died uncleanly leaves its pid file behind and the next
    # one refuses to start; remove it only when no such process is alive.
    if [[ -f /var/run/docker.pid ]]; then
        local old
        old="$(cat /var/run/docker.pid 2>/dev/null || true)"
        if [[ -z "$old" || ! -d "/proc/$old" ]]; then
            rm -f /var/run/docker.pid
        fi
    fi
    log "starting dockerd with flags: ${*:-(none)} (log: $ENGINE_LOG)"
    {
        echo "=== $(date -u +%FT%TZ) dockerd $*"
    } >>"$ENGINE_LOG"
    # setsid -w: $! stays alive exactly as long as dockerd does, whether or
    # not setsid had to fork. dockerd's own pid comes from its pid file.
    setsid -w dockerd "$@" >>"$ENGINE_LOG" 2>&1 </dev/null &
    launcher=$!
    printf '%s\n' "$*" >"$ENGINE_STATE_DIR/dockerd.flags"
    for ((i = 0; i < wait_s * 2; i++)); do
        if engine_up; then
            pid="$(cat /var/run/docker.pid 2>/dev/null || true)"
            [[ "$pid" =~ ^[0-9]+$ ]] || pid="$launcher"
            echo "$pid" >"$ENGINE_PIDFILE"
            log "dockerd (pid $pid) is up after ~$((i / 2))s: $(docker info --format 'server {{.ServerVersion}}, storage {{.Driver}}, cgroup {{.CgroupDriver}} v{{.CgroupVersion}}' 2>/dev/null)"
            return 0
        fi
        if ! kill -0 "$launcher" 2>/dev/null; then
            log "dockerd exited during startup:"
            show_startup_error
            return 1
        fi
        sleep 0.5
    done
    log "dockerd did not answer within ${wait_s}s; stopping it"
    show_startup_error
    pid="$(cat /var/run/docker.pid 2>/dev/null || true)"
    [[ "$pid" =~ ^[0-9]+$ ]] && { kill -TERM "$pid" 2>/dev/null || true; }
    kill -TERM "$launcher" 2>/dev/null || true
    for ((i = 0; i < 40; i++)); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.5; done
    [[ "$pid" =~ ^[0-9]+$ ]] && { kill -KILL "$pid" 2>/dev/null || true; }
    kill -KILL "$launcher" 2>/dev/null || true
    return 1
}

main() {
    install_missing
    if engine_up; then
        if [[ -n "$(our_dockerd_pid)" ]]; then
            log "engine already running (started by these scripts, pid $(our_dockerd_pid))"
        else
            log "engine already running (not started by these scripts; it will be left alone)"
        fi
        return 0
    fi
    mkdir -p "$ENGINE_STATE_DIR"
    # A stale record of ours (dockerd gone) means nothing to stop any more.
    [[ -n "$(our_dockerd_pid)" ]] || rm -f "$ENGINE_PIDFILE"
    if [[ -n "$(our_dockerd_pid)" ]]; then
        die "our dockerd (pid $(our_dockerd_pid)) is alive but does not answer; see $ENGINE_LOG"
    fi

    local extra=()
    # shellcheck disable=SC2206  # intentional word splitting of user flags
    [[ -n "${REACTORBUS_DOCKERD_FLAGS:-}" ]] && extra=(${REACTORBUS_DOCKERD_FLAGS})

    # 1. stock settings (overlay2, iptables NAT, bridge)
    try_dockerd "${extra[@]}" && return 0
    # 2. no netfilter: sandboxes without iptables/nf_tables support. Containers
    #    on one bridge still reach each other; nothing is NATed outwards.
    if try_dockerd --iptables=false --ip6tables=false "${extra[@]}"; then
        if iptables -S FORWARD 2>/dev/null | grep -q '^-P FORWARD DROP'; then
            log "WARNING: dockerd runs without iptables but the FORWARD policy is DROP;" \
                "containers on one network may not reach each other"
        fi
        return 0
    fi
    # 3. no overlayfs either (e.g. /var/lib/docker on an overlay itself).
    try_dockerd --iptables=false --ip6tables=false --storage-driver=vfs "${extra[@]}" && return 0
    die "could not start dockerd with any settings; see $ENGINE_LOG"
}

main "$@"
