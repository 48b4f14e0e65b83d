#!/usr/bin/env bash
# Builds what the compose deployment runs:
#   1. the base image, when missing (build-base-image.sh: debootstrap+import);
#   2. the Prometheus image $PROMETHEUS_IMAGE and the etcd image $ETCD_IMAGE
#      (of docker-compose.ha.yml), when missing (build-prometheus-image.sh,
#      build-etcd-image.sh: debootstrap of Debian's packages+import);
#   3. reactor-node, release, with the Swift runtime linked statically;
#   4. the runtime image $NODE_IMAGE (reactorbus/reactor-node:latest) from
#      the Dockerfile at the repository root, with a build context holding
#      only the binary.
# Then it checks that the binary starts inside the image.
#
# Usage: scripts/docker/build-images.sh
# Env:   SWIFT (default swift), REACTORBUS_IMAGE, REACTORBUS_BASE_IMAGE,
#        REACTORBUS_PROMETHEUS_IMAGE, REACTORBUS_ETCD_IMAGE
set -euo pipefail
LOG_TAG=images
# shellcheck source=scripts/docker/lib.sh
source "$(dirname "$0")/lib.sh"

SWIFT="${SWIFT:-swift}"
start=$SECONDS

engine_up || "$DOCKER_SCRIPTS/ensure-engine.sh"
"$DOCKER_SCRIPTS/build-base-image.sh"
"$DOCKER_SCRIPTS/build-prometheus-image.sh"
"$DOCKER_SCRIPTS/build-etcd-image.sh"

cd "$REPO_ROOT"
"$REPO_ROOT/scripts/ensure-deps.sh"
swift_flags=(-c release --static-swift-stdlib --product reactor-node)
log "swift build ${swift_flags[*]}"
t0=$SECONDS
"$SWIFT" build "${swift_flags[@]}"
bin_dir="$("$SWIFT" build "${swift_flags[@]}" --show-bin-path)"
binary="$bin_dir/reactor-node"
[[ -x "$binary" ]] || die "no binary at $binary"
log "built $binary ($(du -h "$binary" | cut -f1)) in $((SECONDS - t0))s"

# The image has only what the base image has: refuse a binary that needs a
# shared library beyond libc/libstdc++/libzmq/libmsgpackc/libmicrohttpd/libcurl and their deps
# (for instance a dynamically linked Swift runtime).
if ldd "$binary" | grep -E 'libswift|libFoundation|libdispatch|libBlocksRuntime|not found' >&2; then
    die "the binary needs shared libraries the runtime image does not have (see above)"
fi

context="$(mktemp -d "${TMPDIR:-/tmp}/reactorbus-context.XXXXXX")"
# shellcheck disable=SC2064  # expand $context now
trap "rm -rf '$context'" EXIT
cp "$binary" "$context/reactor-node"
cp "$REPO_ROOT/Dockerfile" "$context/Dockerfile"

log "docker build -t $NODE_IMAGE (FROM $BASE_IMAGE, context: the binary only)"
t0=$SECONDS
docker_build --quiet --build-arg "BASE_IMAGE=$BASE_IMAGE" \
    --label "org.opencontainers.image.revision=$(git -C "$REPO_ROOT" rev-parse HEAD 2>/dev/null || echo unknown)" \
    -t "$NODE_IMAGE" "$context" >/dev/null
log "image built in $((SECONDS - t0))s: $NODE_IMAGE $(docker image inspect -f '{{.Id}}' "$NODE_IMAGE" | cut -c1-19)"

# Smoke test: the binary starts in the image (missing shared libraries or a
# wrong architecture show up here, not in the middle of the compose test).
# No network: nothing in this check talks to anything.
if ! out="$(docker run --rm --pull=never --network none --entrypoint /bin/sh "$NODE_IMAGE" -c \
    'ldd /usr/local/bin/reactor-node | grep "not found"; test -x /usr/local/bin/reactor-node && id -un' 2>&1)" \
    || [[ "$out" != reactor ]]; then
    printf '%s\n' "$out" >&2
    die "reactor-node cannot load its libraries in $NODE_IMAGE"
fi
log "images ready in $((SECONDS - start))s"
