#!/usr/bin/env bash
# Builds the etcd image of the high-availability deployment (docker-compose.ha.yml)
# locally, without any image registry: Debian bookworm minbase plus Debian's
# `etcd-server` and `etcd-client` packages, made by debootstrap and imported as
# $ETCD_IMAGE (reactorbus/etcd:latest). It runs /usr/bin/etcd; etcdctl is in
# the image too (the healthcheck and compose-ha-test.sh use it).
# See debootstrap.sh for the mirror it uses.
#
# Usage: scripts/docker/build-etcd-image.sh [--force]
#        (without --force an existing image is kept, unless it was made from
#        another package list)
set -euo pipefail
LOG_TAG=etcd-image
# shellcheck source=scripts/docker/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/docker/debootstrap.sh
source "$DOCKER_SCRIPTS/debootstrap.sh"

PACKAGES=etcd-server,etcd-client
force=0
[[ "${1:-}" == "--force" ]] && force=1

main() {
    if ! engine_up; then
        "$DOCKER_SCRIPTS/ensure-engine.sh"
    fi
    if ((!force)) && image_is_current "$ETCD_IMAGE" "$PACKAGES"; then
        log "$ETCD_IMAGE exists already ($(docker image inspect -f '{{.Created}}' "$ETCD_IMAGE")); skipping debootstrap (use --force to rebuild)"
        return 0
    fi
    command -v debootstrap >/dev/null 2>&1 || "$DOCKER_SCRIPTS/ensure-engine.sh"
    debootstrap_image "$ETCD_IMAGE" "$PACKAGES" reactorbus-etcd "etcd etcdctl" \
        'EXPOSE 2379' \
        'ENTRYPOINT ["/usr/bin/etcd"]'
}

main "$@"
