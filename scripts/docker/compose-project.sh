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
