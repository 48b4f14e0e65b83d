#!/usr/bin/env bash
# Builds the runtime base image locally, without any image registry:
# a Debian bookworm minbase root file system made by debootstrap (plus the
# four shared libraries reactor-node links: libzmq5, libmsgpackc2,
# libmicrohttpd12 and libcurl4, for etcd elections), imported as $BASE_IMAGE
# (reactorbus-base:bookworm).
# See debootstrap.sh for the mirror it uses.
#
# Usage: scripts/docker/build-base-image.sh [--force]
#        (without --force an existing image is kept, unless it was made from
#        another package list)
set -euo pipefail
LOG_TAG=base-image
# shellcheck source=scripts/docker/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/docker/debootstrap.sh
source "$DOCKER_SCRIPTS/debootstrap.sh"

PACKAGES=libzmq5,libmsgpackc2,libmicrohttpd12,libcurl4
force=0
[[ "${1:-}" == "--force" ]] && force=1

main() {
    if ! engine_up; then
        "$DOCKER_SCRIPTS/ensure-engine.sh"
    fi
    if ((!force)) && image_is_current "$BASE_IMAGE" "$PACKAGES"; then
        log "$BASE_IMAGE exists already ($(docker image inspect -f '{{.Created}}' "$BASE_IMAGE")); skipping debootstrap (use --force to rebuild)"
        return 0
    fi
    command -v debootstrap >/dev/null 2>&1 || "$DOCKER_SCRIPTS/ensure-engine.sh"
    debootstrap_image "$BASE_IMAGE" "$PACKAGES" reactorbus-base \
        "libzmq.so.5 libmsgpackc.so.2 libmicrohttpd.so.12 libcurl.so.4" 'CMD ["/bin/bash"]'
}

main "$@"
