# shellcheck shell=bash
# Helpers shared by the compose integration tests (compose-test.sh,
# compose-ha-test.sh). Sourced after lib.sh, once PROJECT and COMPOSE (the
# docker-compose command line of the test's project) are set. Sourced, never run.

passed=0
failed=0

pass() { passed=$((passed + 1)); log "PASS $1"; }
fail() { failed=$((failed + 1)); log "FAIL $1: $2"; }

# compose with a bound on how long it may take.
dc() {
    local limit="$1"
    shift
    timeout --kill-after=10 "$limit" "${COMPOSE[@]}" "$@" </dev/null
}

container_of() { dc 60 ps -q "$1" 2>/dev/null | head -n 1; }

# Brings the project down and removes whatever compose left behind (a `run`
# container of a killed command, say), by the project's label.
remove_project() {
    log "tearing down project $PROJECT"
    dc 180 down -v --remove-orphans --timeout 10 >&2 2>&1 || true
    local left
    left="$(docker ps -aq --filter "label=com.docker.compose.project=$PROJECT" 2>/dev/null)"
    if [[ -n "$left" ]]; then
        log "removing leftover containers: $(echo "$left" | tr '\n' ' ')"
        # shellcheck disable=SC2086  # one id per word
        docker rm -f -v $left >/dev/null 2>&1 || true
    fi
    docker volume ls -q --filter "label=com.docker.compose.project=$PROJECT" 2>/dev/null \
        | xargs -r docker volume rm -f >/dev/null 2>&1 || true
    docker network ls -q --filter "label=com.docker.compose.project=$PROJECT" 2>/dev/null \
        | xargs -r docker network rm >/dev/null 2>&1 || true
}

# The EXIT trap of a compose test: stops its background `send`, shows the services' logs when a
# test failed, removes the project, stops a dockerd this run started, and prints
# "$SUMMARY_LABEL: N passed, M failed" (tests that never ran count as failed).
# The test sets TESTS, WORK, SUMMARY_LABEL and LOG_LINES, and keeps send_pid,
# project_started and engine_was_up up to date.
engine_was_up=0
project_started=0
send_pid=""

teardown() {
    local rc=$?
    trap - EXIT INT TERM
    if [[ -n "$send_pid" ]] && kill -0 "$send_pid" 2>/dev/null; then
        kill -TERM "$send_pid" 2>/dev/null || true
        wait "$send_pid" 2>/dev/null || true
    fi
    if ((project_started)); then
        if ((failed > 0 || passed < ${#TESTS[@]})); then
            log "services' logs (last $LOG_LINES lines each):"
            dc 60 logs --no-color --tail="$LOG_LINES" >&2 2>&1 || true
        fi
        remove_project
    fi
    if ((!engine_was_up)) && [[ "${REACTORBUS_IT_KEEP_ENGINE:-0}" != 1 ]]; then
        "$DOCKER_SCRIPTS/stop-engine.sh" || true
    fi
    rm -rf "$WORK"
    local not_run=$((${#TESTS[@]} - passed - failed))
    ((not_run > 0)) && failed=$((failed + not_run))
    ((rc != 0 && failed == 0)) && failed=1
    echo "$SUMMARY_LABEL: $passed passed, $failed failed"
    ((failed == 0)) || exit 1
    exit 0
}
