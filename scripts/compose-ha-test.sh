#!/usr/bin/env bash
# Integration test of the high-availability deployment (docker-compose.ha.yml).
#
# In a compose project of its own (reactorbus-ha-<pid>) it brings up etcd,
# three elected authorities under sync replication, 2 workers and an
# observer, then checks:
#   1. election: exactly one authority leads (etcd's leader key names it) and
#      the two others follow it (both registered as standbys);
#   2. failover: 100,000 mixed counter actions (half countUp, half
#      countUpAsync) sent from a client container that lists all three
#      authorities; the primary's container is killed (docker kill) mid-run;
#      a standby takes over; the client's every action is acked and the state
#      ends exactly {"count":100000}, seen by a fresh `observe --once` and by
#      the long-running observer.
# Every container, network and volume of the project is removed at the end,
# on failure too, and a dockerd started by this run is stopped.
#
# The last line is `compose-ha: N passed, M failed`; the exit status is
# non-zero unless both passed.
#
# Usage: scripts/compose-ha-test.sh
# Env:   REACTORBUS_IT_SKIP_BUILD=1    use the images as they are
#        REACTORBUS_IT_REPEAT=50000    sends per action kind (long enough that the kill lands mid-run)
#        REACTORBUS_IT_KEEP_ENGINE=1   leave a dockerd this run started running
set -uo pipefail
LOG_TAG=compose-ha-test
# shellcheck source=scripts/docker/lib.sh
source "$(dirname "$0")/docker/lib.sh"

PROJECT="reactorbus-ha-$$"
REPEAT="${REACTORBUS_IT_REPEAT:-50000}"
TOTAL=$((REPEAT * 2))
COMPOSE=(docker-compose --ansi never -p "$PROJECT" -f "$REPO_ROOT/docker-compose.ha.yml")
TESTS=(election failover)
AUTHORITIES=(authority-a authority-b authority-c)
# shellcheck source=scripts/docker/compose-project.sh
source "$DOCKER_SCRIPTS/compose-project.sh"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/reactorbus-ha.XXXXXX")"

export COMPOSE_HTTP_TIMEOUT=120
export REACTORBUS_IMAGE="$NODE_IMAGE"
export REACTORBUS_ETCD_IMAGE="$ETCD_IMAGE"

SUMMARY_LABEL=compose-ha
LOG_LINES=100
trap teardown EXIT
trap 'log "interrupted"; exit 130' INT TERM

# etcdctl in the etcd container.
etcdctl() {
    local cid
    cid="$(container_of etcd)"
    [[ -n "$cid" ]] || return 1
    timeout 30 docker exec "$cid" etcdctl --endpoints=http://127.0.0.1:2379 "$@"
}

# The name of the authority that holds the leader key, or nothing.
leader() {
    etcdctl get --print-value-only /reactorbus/counter/leader 2>/dev/null \
        | python3 -c 'import json, sys
text = sys.stdin.read().strip()
print(json.loads(text)["name"] if text else "")' 2>/dev/null
}

# How many standbys registered their progress.
standbys() {
    etcdctl get --prefix --keys-only /reactorbus/counter/standbys/ 2>/dev/null | grep -c standbys/ || true
}

# "V COUNT" of a fresh `observe --once` through all three authorities, or nothing.
observe_fresh() {
    dc 120 run --rm -T --no-deps client observe --once --json --timeout 20 2>"$WORK/observe.err" \
        | python3 -c 'import json, sys
for line in sys.stdin:
    try:
        value = json.loads(line)
        print(value["version"], value["state"]["count"])
        break
    except (ValueError, KeyError, TypeError):
        pass'
}

# The count of the long-running observer's last snapshot, or nothing.
observer_count() {
    local cid
    cid="$(container_of observer)"
    [[ -n "$cid" ]] || return 1
    timeout 30 docker logs --tail 200 "$cid" 2>/dev/null | python3 -c 'import json, sys
last = ""
for line in sys.stdin:
    try:
        last = json.loads(line)["state"]["count"]
    except (ValueError, KeyError, TypeError):
        pass
print(last)'
}

setup() {
    if engine_up; then
        engine_was_up=1
    fi
    "$DOCKER_SCRIPTS/ensure-engine.sh" || return 1
    if [[ "${REACTORBUS_IT_SKIP_BUILD:-0}" != 1 ]]; then
        "$DOCKER_SCRIPTS/build-images.sh" || return 1
    fi
    local image
    for image in "$NODE_IMAGE" "$ETCD_IMAGE"; do
        docker image inspect "$image" >/dev/null 2>&1 || {
            log "image $image is missing (run scripts/docker/build-images.sh)"
            return 1
        }
    done
    dc 60 config -q || return 1
    log "project $PROJECT: up etcd + 3 elected authorities + 2 workers + observer"
    project_started=1
    dc 300 up -d --no-build --scale worker=2 etcd "${AUTHORITIES[@]}" worker observer || return 1
}

test_election() {
    local deadline=$((SECONDS + 120)) name="" count=0
    while ((SECONDS < deadline)); do
        name="$(leader)"
        count="$(standbys)"
        [[ -n "$name" && "$count" == 2 ]] && break
        sleep 1
    done
    [[ -n "$name" ]] || { fail election "no leader within 120 s"; return 1; }
    [[ "$count" == 2 ]] || { fail election "$count standby(s) registered, not 2"; return 1; }
    local snap
    snap="$(observe_fresh)"
    [[ "$snap" == "0 0" ]] || { fail election "a fresh observe through the lists gave '${snap}', not version 0, count 0"; return 1; }
    pass "election ($name leads, 2 standbys follow)"
}

test_failover() {
    local primary t0=$SECONDS snap version=0 deadline
    primary="$(leader)"
    [[ -n "$primary" ]] || { fail failover "no leader"; return 1; }
    log "sending $TOTAL actions (${REPEAT}x countUp and countUpAsync) through all three authorities; $primary leads"
    dc 400 run --rm -T --no-deps client send --repeat "$REPEAT" --concurrency 16 --connect-timeout 120 --timeout 300 \
        '{"countUp":{}}' '{"countUpAsync":{}}' >"$WORK/send.out" 2>"$WORK/send.err" &
    send_pid=$!
    deadline=$((SECONDS + 120))
    while ((SECONDS < deadline)); do
        snap="$(observe_fresh)"
        version="${snap%% *}"
        [[ -n "$version" ]] && ((version >= 2000)) && break
        sleep 1
    done
    ((version >= 2000)) || { fail failover "the load never reached version 2000"; return 1; }
    kill -0 "$send_pid" 2>/dev/null || { fail failover "the load ended before the kill"; return 1; }
    log "killing $primary at version >= $version"
    docker kill "$(container_of "$primary")" >/dev/null || { fail failover "docker kill $primary failed"; return 1; }
    local killed_at=$SECONDS next=""
    deadline=$((SECONDS + 60))
    while ((SECONDS < deadline)); do
        next="$(leader)"
        [[ -n "$next" && "$next" != "$primary" ]] && break
        sleep 0.2
    done
    [[ -n "$next" && "$next" != "$primary" ]] || { fail failover "no new leader within 60 s"; return 1; }
    log "$next leads $((SECONDS - killed_at))s after the kill"
    wait "$send_pid"
    local rc=$?
    send_pid=""
    log "send exited $rc: $(tail -n 1 "$WORK/send.out")"
    if ((rc != 0)); then
        tail -n 20 "$WORK/send.err" >&2
        fail failover "send exited $rc"
        return 1
    fi
    grep -q "\"acked\":$TOTAL,\"failed\":0" "$WORK/send.out" || { fail failover "not every action was acked"; return 1; }
    deadline=$((SECONDS + 120))
    while ((SECONDS < deadline)); do
        snap="$(observe_fresh)"
        [[ "${snap#* }" == "$TOTAL" ]] && break
        sleep 1
    done
    [[ "${snap#* }" == "$TOTAL" ]] || { fail failover "the count is '${snap#* }', not $TOTAL"; return 1; }
    sleep 2 # anything still in flight would overshoot now
    snap="$(observe_fresh)"
    [[ "$snap" == "$TOTAL $TOTAL" ]] || { fail failover "fresh observe: '$snap', not version and count $TOTAL"; return 1; }
    local seen=""
    deadline=$((SECONDS + 60))
    while ((SECONDS < deadline)); do
        seen="$(observer_count)"
        [[ "$seen" == "$TOTAL" ]] && break
        sleep 1
    done
    [[ "$seen" == "$TOTAL" ]] || { fail failover "the observer's last count is '$seen'"; return 1; }
    pass "failover ($primary killed, $next took over, $TOTAL actions exactly once, $((SECONDS - t0))s)"
}

setup || { fail setup "could not bring the deployment up"; exit 1; }
test_election && test_failover
