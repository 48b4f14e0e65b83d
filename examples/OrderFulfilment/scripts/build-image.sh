#!/usr/bin/env bash
# Builds the order-node image locally, without any image registry:
#   1. the base image, when missing (the repository's build-base-image.sh);
#   2. order-node, release, with the Swift runtime linked statically;
#   3. the image $ORDER_NODE_IMAGE (reactorbus/order-node:latest) from ../Dockerfile, with a
#      build context holding only the binary;
# then checks that the binary starts inside the image.
#
# Usage: examples/OrderFulfilment/scripts/build-image.sh
# Env:   SWIFT (default swift), ORDER_NODE_IMAGE, REACTORBUS_BASE_IMAGE
set -euo pipefail
EXAMPLE="$(cd "$(dirname "$0")/.." && pwd)"
LOG_TAG=order-image
# The repository's helpers: log, die, engine_up, docker_build, $BASE_IMAGE, $DOCKER_SCRIPTS.
# shellcheck source=../../../scripts/docker/lib.sh
source "$EXAMPLE/../../scripts/docker/lib.sh"

SWIFT="${SWIFT:-swift}"
IMAGE="${ORDER_NODE_IMAGE:-reactorbus/order-node:latest}"

engine_up || "$DOCKER_SCRIPTS/ensure-engine.sh"
"$DOCKER_SCRIPTS/build-base-image.sh"
"$REPO_ROOT/scripts/ensure-deps.sh"

flags=(--package-path "$EXAMPLE" -c release --static-swift-stdlib --product order-node)
log "swift build ${flags[*]}"
"$SWIFT" build "${flags[@]}"
binary="$("$SWIFT" build "${flags[@]}" --show-bin-path)/order-node"
[[ -x "$binary" ]] || die "no binary at $binary"
if ldd "$binary" | grep -E 'libswift|libFoundation|libdispatch|libBlocksRuntime|not found' >&2; then
    die "the binary needs shared libraries the image does not have (see above)"
fi

context="$(mktemp -d "${TMPDIR:-/tmp}/order-node-context.XXXXXX")"
# shellcheck disable=SC2064  # expand $context now
trap "rm -rf '$context'" EXIT
cp "$binary" "$EXAMPLE/Dockerfile" "$context/"
log "docker build -t $IMAGE (FROM $BASE_IMAGE, context: the binary only)"
docker_build --quiet --build-arg "BASE_IMAGE=$BASE_IMAGE" -t "$IMAGE" "$context" >/dev/null

# The binary starts in the image (no network: nothing here talks to anything).
out="$(docker run --rm --pull=never --network none "$IMAGE" --help 2>&1 | head -n 1)" \
    || die "order-node does not start in $IMAGE: $out"
[[ "$out" == order-node* ]] || die "order-node does not start in $IMAGE: $out"
log "image ready: $IMAGE"
