#!/usr/bin/env bash
# Integration test of the container deployment (docker-compose.yml).
#
# It makes sure a Docker engine runs (starting one if needed), builds the
# images, and in a compose project of its own (reactorbus-it-<pid>) brings up
# an authority, 2 workers, an observer and Prometheus, then checks:
#   1. batch: 10,000 mixed counter actions (half countUp, half countUpAsync)
#      sent from a client container end in exactly {"count":10000}, seen by a
#      fresh `observe --once --json` and on the long-running observer's last line;
#   2. metrics: Prometheus, asked through its HTTP API (promtool in its
#      container: the test network has no route to the host), has scraped
#      reactorbus_actions_applied_total = 10,000 from the authority, both
#      workers, and their reactorbus_worker_jobs_done_total adding up to the
#      5,000 async actions;
#   3. worker-kill: a second, larger batch (100,000, so that it runs for
#      seconds) with one worker killed (docker kill) while it runs ends in
#      exactly {"count":110000};
#   4. restart: the authority's state (count and version) survives a
#      `docker-compose restart authority`, and a re-created authority
#      container, which only has the named volume to recover from.
# Every container, network and volume of the project is removed at the end,
# on failure too, and a dockerd started by this run is stopped.
#
# The last line is `compose: N passed, M failed`; the exit status is non-zero
# unless all 4 passed.
#
# Usage: scripts/compose-test.sh
# Env:   REACTORBUS_IT_SKIP_BUILD=1    use the images as they are
#        REACTORBUS_IT_REPEAT=5000     sends per action kind in each batch
#        REACTORBUS_IT_KILL_REPEAT=50000  sends per action kind in the worker-kill
#                                      batch: long enough (~10 s) that the kill lands mid-run
#        REACTORBUS_IT_SEND_TIMEOUT=300  seconds a batch may take
#        REACTORBUS_IT_KEEP_ENGINE=1   leave a dockerd this run started running
set -uo pipefail
LOG_TAG=compose-test
# shellcheck source=scripts/docker/lib.sh
source "$(dirname "$0")/docker/lib.sh"

PROJECT="reactorbus-it-$$"
REPEAT="${REACTORBUS_IT_REPEAT:-5000}"
PER_BATCH=$((REPEAT * 2))
# The worker-kill batch is larger: at the authority's speed 10,000 actions are acked in about
# a second, too short to be sure that a worker dies while the batch is still running.
KILL_REPEAT="${REACTORBUS_IT_KILL_REPEAT:-$((REPEAT * 10))}"
KILL_BATCH=$((KILL_REPEAT * 2))
SEND_TIMEOUT="${REACTORBUS_IT_SEND_TIMEOUT:-300}"
COMPOSE=(docker-compose --ansi never -p "$PROJECT"
    -f "$REPO_ROOT/docker-compose.yml" -f "$DOCKER_SCRIPTS/compose.test.yml")
ACTIONS=('{"countUp":{}}' '{"countUpAsync":{}}')
# shellcheck source=scripts/docker/compose-project.sh
source "$DOCKER_SCRIPTS/compose-project.sh"
TESTS=(batch metrics worker-kill restart)

WORK="$(mktemp -d "${TMPDIR:-/tmp}/reactorbus-it.XXXXXX")"

export COMPOSE_HTTP_TIMEOUT=120
# Quiet compose's "variable is not set" noise for values we default anyway.
export REACTORBUS_IMAGE="$NODE_IMAGE"
export REACTORBUS_PROMETHEUS_IMAGE="$PROMETHEUS_IMAGE"

SUMMARY_LABEL=compose
LOG_LINES=200
trap teardown EXIT
trap 'log "interrupted"; exit 130' INT TERM

# ---------------------------------------------------------------- helpers
# Reads one snapshot line {"version":V,"state":{...}} on stdin and prints
# "V <state as canonical JSON>", or nothing when the line is not a snapshot.
parse_snapshot() {
    python3 -c '
import json, sys
for line in sys.stdin:
    line = line.strip()
    if not line.startswith("{"):
        continue
    try:
        d = json.loads(line)
        print(d["version"], json.dumps(d["state"], sort_keys=True, separators=(",", ":")))
    except (ValueError, KeyError, TypeError):
        pass
' | tail -n 1
}

state_json() { printf '{"count":%d}' "$1"; }

# The current snapshot from a fresh `observe --once --json` in a new client
# container; prints "V STATE". Fails if there is none.
observe_fresh() {
    local out
    out="$(dc 120 run --rm -T --no-deps client observe --once --json --timeout 20 2>"$WORK/observe.err" \
        | parse_snapshot)"
    if [[ -z "$out" ]]; then
        log "observe --once gave no snapshot; its stderr:"
        tail -n 20 "$WORK/observe.err" >&2
        return 1
    fi
    echo "$out"
}

# Same, but as a new process in the running observer container (cheap, for
# polling).
observe_quick() {
    local cid
    cid="$(container_of observer)"
    [[ -n "$cid" ]] || return 1
    timeout 30 docker exec "$cid" reactor-node observe --once --json --timeout 10 2>/dev/null \
        | parse_snapshot
}

# The last snapshot the long-running observer printed on stdout.
observer_last() {
    local cid
    cid="$(container_of observer)"
    [[ -n "$cid" ]] || return 1
    timeout 30 docker logs --tail 5000 "$cid" 2>/dev/null | parse_snapshot
}

count_of() { # "V {"count":N}" -> N, or empty
    sed -n 's/^[0-9]* {"count":\([0-9]*\)}$/\1/p' <<<"$1"
}

# Polls PROBE (observe_quick / observer_last) until the state is exactly
# {"count":N}, for at most SECONDS; fails early if the count overshoots.
wait_for_count() {
    local probe="$1" want="$2" limit="$3" snap="" n
    local deadline=$((SECONDS + limit)) last_log=$SECONDS
    while ((SECONDS < deadline)); do
        snap="$($probe || true)"
        n="$(count_of "$snap")"
        if [[ "${snap#* }" == "$(state_json "$want")" ]]; then
            echo "$snap"
            return 0
        fi
        if [[ -n "$n" ]] && ((n > want)); then
            log "$probe: count $n overshoots $want (snapshot: $snap)"
            return 1
        fi
        if ((SECONDS - last_log >= 10)); then
            log "  waiting for count $want ($probe: ${snap:-no snapshot yet})"
            last_log=$SECONDS
        fi
        sleep 1
    done
    log "$probe: no state $(state_json "$want") within ${limit}s (last: ${snap:-none})"
    return 1
}

# The value of a PromQL expression that yields one series, as Prometheus's
# HTTP API answers it (/api/v1/query through promtool, run in the Prometheus
# container); prints nothing when there is no such series yet.
prom_value() {
    local cid out
    cid="$(container_of prometheus)"
    [[ -n "$cid" ]] || return 1
    out="$(timeout 30 docker exec "$cid" promtool query instant -o json http://localhost:9090 "$1" 2>/dev/null)" || return 1
    python3 -c '
import json, sys
result = json.loads(sys.stdin.read() or "[]")
if len(result) == 1:
    print(result[0]["value"][1])
' <<<"$out"
}

# Polls prom_value EXPR until it is exactly WANT, for at most SECONDS; fails
# early if a counter overshoots.
wait_for_prom() {
    local expr="$1" want="$2" limit="$3" got="" deadline=$((SECONDS + $3)) last_log=$SECONDS
    while ((SECONDS < deadline)); do
        got="$(prom_value "$expr" || true)"
        [[ "$got" == "$want" ]] && return 0
        if [[ "$got" =~ ^[0-9]+$ ]] && ((got > want)); then
            log "$expr = $got overshoots $want"
            return 1
        fi
        if ((SECONDS - last_log >= 10)); then
            log "  waiting for $expr = $want (now: ${got:-no series})"
            last_log=$SECONDS
        fi
        sleep 1
    done
    log "$expr is not $want within ${limit}s (last: ${got:-no series})"
    return 1
}

wait_healthy() {
    local svc="$1" limit="$2" cid status="" deadline=$((SECONDS + $2))
    while ((SECONDS < deadline)); do
        cid="$(container_of "$svc")"
        if [[ -n "$cid" ]]; then
            status="$(docker inspect -f '{{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}' "$cid" 2>/dev/null)"
            [[ "$status" == healthy ]] && return 0
        fi
        sleep 1
    done
    log "$svc not healthy within ${limit}s (status: ${status:-no container})"
    return 1
}

# Sends one batch from a client container: $2 (default REPEAT) times each action.
# Output: $WORK/send-$1.out (summary), .err (progress and logs).
send_batch() {
    local tag="$1" repeat="${2:-$REPEAT}"
    dc $((SEND_TIMEOUT + 60)) run --rm -T --no-deps client send \
        --repeat "$repeat" --concurrency 16 --timeout "$SEND_TIMEOUT" "${ACTIONS[@]}" \
        >"$WORK/send-$tag.out" 2>"$WORK/send-$tag.err"
}

report_send() {
    local tag="$1" rc="$2"
    log "send ($tag) exited $rc; summary: $(tail -n 1 "$WORK/send-$tag.out" 2>/dev/null)"
    if ((rc != 0)); then
        log "send ($tag) stderr (last 20 lines):"
        tail -n 20 "$WORK/send-$tag.err" >&2
    fi
}

running_count() {
    local svc="$1" n=0 cid
    for cid in $(dc 60 ps -q "$svc" 2>/dev/null); do
        [[ "$(docker inspect -f '{{.State.Running}}' "$cid" 2>/dev/null)" == true ]] && n=$((n + 1))
    done
    echo "$n"
}

# ---------------------------------------------------------------- setup
setup() {
    if engine_up; then
        engine_was_up=1
    fi
    "$DOCKER_SCRIPTS/ensure-engine.sh" || return 1
    if [[ "${REACTORBUS_IT_SKIP_BUILD:-0}" != 1 ]]; then
        "$DOCKER_SCRIPTS/build-images.sh" || return 1
    fi
    # compose would try to pull a missing image, and there is no registry.
    local image
    for image in "$NODE_IMAGE" "$PROMETHEUS_IMAGE"; do
        docker image inspect "$image" >/dev/null 2>&1 || {
            log "image $image is missing (run scripts/docker/build-images.sh)"
            return 1
        }
    done
    dc 60 config -q || return 1

    log "project $PROJECT: up authority + 2 workers + observer + prometheus"
    project_started=1
    dc 300 up -d --no-build --scale worker=2 authority worker observer prometheus || return 1
    wait_healthy authority 120 || return 1
    log "running: authority=$(running_count authority) worker=$(running_count worker) observer=$(running_count observer)"
    [[ "$(running_count worker)" == 2 && "$(running_count observer)" == 1 ]] || {
        log "expected 2 running workers and 1 observer"
        return 1
    }
}

# ---------------------------------------------------------------- tests
test_batch() {
    local snap rc t0=$SECONDS
    snap="$(observe_fresh)" || { fail batch "no initial snapshot"; return 1; }
    log "initial snapshot: $snap"
    [[ "${snap#* }" == "$(state_json 0)" ]] || { fail batch "initial state is not $(state_json 0)"; return 1; }

    log "batch 1: sending $PER_BATCH actions (${REPEAT}x each of ${ACTIONS[*]})"
    send_batch 1
    rc=$?
    report_send 1 "$rc"
    ((rc == 0)) || { fail batch "send exited $rc"; return 1; }
    log "batch 1 acked in $((SECONDS - t0))s"

    wait_for_count observe_quick "$PER_BATCH" 120 >/dev/null || { fail batch "state is not exactly $(state_json "$PER_BATCH")"; return 1; }
    sleep 2 # anything still in flight would overshoot now
    snap="$(observe_fresh)" || { fail batch "fresh observe failed"; return 1; }
    log "fresh observe --once: $snap"
    [[ "${snap#* }" == "$(state_json "$PER_BATCH")" ]] || { fail batch "fresh observe: $snap"; return 1; }
    snap="$(wait_for_count observer_last "$PER_BATCH" 60)" || { fail batch "observer's last line is not $(state_json "$PER_BATCH")"; return 1; }
    log "observer's last line: $snap"
    pass "batch ($PER_BATCH actions -> $(state_json "$PER_BATCH"), $((SECONDS - t0))s)"
}

test_metrics() {
    local want="$1" t0=$SECONDS
    log "metrics: waiting for Prometheus to scrape reactorbus_actions_applied_total = $want"
    wait_for_prom 'sum(reactorbus_actions_applied_total{job="reactorbus-authority"})' "$want" 90 \
        || { fail metrics "Prometheus's reactorbus_actions_applied_total is not $want"; return 1; }
    wait_for_prom 'count(up{job="reactorbus-workers"} == 1)' 2 60 \
        || { fail metrics "Prometheus does not scrape both workers"; return 1; }
    wait_for_prom 'sum(reactorbus_worker_jobs_done_total{job="reactorbus-workers"})' "$REPEAT" 60 \
        || { fail metrics "the workers' reactorbus_worker_jobs_done_total do not add up to $REPEAT"; return 1; }
    pass "metrics (Prometheus: actions applied $want, 2 workers scraped, $REPEAT jobs done, $((SECONDS - t0))s)"
}

test_worker_kill() {
    local base="$1" want=$(($1 + KILL_BATCH)) snap n victim rc t0=$SECONDS deadline killed_at=""
    log "batch 2: sending $KILL_BATCH more actions in the background"
    send_batch 2 "$KILL_REPEAT" &
    send_pid=$!

    # Wait for the first progress (the observer's count moving past the
    # base), then kill a worker at once, while most of the batch is ahead.
    deadline=$((SECONDS + 120))
    while ((SECONDS < deadline)) && kill -0 "$send_pid" 2>/dev/null; do
        snap="$(observer_last || true)"
        n="$(count_of "$snap")"
        if [[ -n "$n" ]] && ((n > base)); then
            break
        fi
        sleep 0.2
    done
    victim="$(dc 60 ps -q worker | head -n 1)"
    [[ -n "$victim" ]] || { fail worker-kill "no worker container"; wait "$send_pid"; send_pid=""; return 1; }
    if kill -0 "$send_pid" 2>/dev/null; then
        killed_at="count ${n:-?}"
    else
        log "NOTE: the batch finished before a worker could be killed; the kill did not overlap it"
    fi
    log "docker kill worker ${victim:0:12} (progress: ${killed_at:-after the batch})"
    docker kill "$victim" >/dev/null || { fail worker-kill "docker kill failed"; wait "$send_pid"; send_pid=""; return 1; }

    wait "$send_pid"
    rc=$?
    send_pid=""
    report_send 2 "$rc"
    ((rc == 0)) || { fail worker-kill "send exited $rc"; return 1; }
    log "batch 2 acked in $((SECONDS - t0))s; running workers now: $(running_count worker)"

    wait_for_count observe_quick "$want" 180 >/dev/null || { fail worker-kill "state is not exactly $(state_json "$want")"; return 1; }
    sleep 2
    snap="$(observe_fresh)" || { fail worker-kill "fresh observe failed"; return 1; }
    log "fresh observe --once: $snap"
    [[ "${snap#* }" == "$(state_json "$want")" ]] || { fail worker-kill "fresh observe: $snap"; return 1; }
    snap="$(wait_for_count observer_last "$want" 60)" || { fail worker-kill "observer's last line is not $(state_json "$want")"; return 1; }
    log "observer's last line: $snap"
    [[ -n "$killed_at" ]] || { fail worker-kill "the kill did not overlap the batch (batch too fast to test; raise REACTORBUS_IT_REPEAT)"; return 1; }
    pass "worker-kill (killed at ${killed_at}, total $(state_json "$want"), $((SECONDS - t0))s)"
}

test_restart() {
    local want="$1" before after cid_before cid_after t0=$SECONDS
    before="$(observe_fresh)" || { fail restart "no snapshot before restart"; return 1; }
    log "before restart: $before"
    [[ "${before#* }" == "$(state_json "$want")" ]] || { fail restart "state before restart: $before"; return 1; }
    cid_before="$(container_of authority)"

    log "docker-compose restart authority"
    dc 120 restart authority >&2 2>&1 || { fail restart "restart failed"; return 1; }
    wait_healthy authority 120 || { fail restart "authority not healthy after restart"; return 1; }
    after="$(observe_fresh)" || { fail restart "no snapshot after restart"; return 1; }
    log "after restart: $after"
    [[ "$after" == "$before" ]] || { fail restart "restart changed the snapshot: $before -> $after"; return 1; }

    # A restart keeps the container's own file system; a re-created container
    # has only the named volume to recover from.
    log "re-creating the authority container (state must come from volume authority-data)"
    dc 180 up -d --no-build --no-deps --force-recreate authority >&2 2>&1 || { fail restart "re-create failed"; return 1; }
    cid_after="$(container_of authority)"
    [[ -n "$cid_after" && "$cid_after" != "$cid_before" ]] || { fail restart "authority container was not re-created"; return 1; }
    wait_healthy authority 120 || { fail restart "authority not healthy after re-create"; return 1; }
    after="$(observe_fresh)" || { fail restart "no snapshot after re-create"; return 1; }
    log "after re-create: $after"
    [[ "$after" == "$before" ]] || { fail restart "re-create changed the snapshot: $before -> $after"; return 1; }
    pass "restart (version and $(state_json "$want") survive restart and re-create, $((SECONDS - t0))s)"
}

# ---------------------------------------------------------------- main
start=$SECONDS
log "starting (project $PROJECT, $PER_BATCH actions per batch, $KILL_BATCH in the worker-kill batch)"
if ! setup; then
    log "setup failed; no test could run"
    exit 1
fi
if test_batch; then
    test_metrics "$PER_BATCH" || true
    if test_worker_kill "$PER_BATCH"; then
        test_restart $((PER_BATCH + KILL_BATCH)) || true
    fi
fi
log "done in $((SECONDS - start))s"
