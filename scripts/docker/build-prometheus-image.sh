#!/usr/bin/env bash
# Builds the Prometheus image of the compose deployment locally, without any
# image registry: Debian bookworm minbase plus Debian's `prometheus` package,
# made by debootstrap and imported as $PROMETHEUS_IMAGE
# (reactorbus/prometheus:latest). It runs /usr/bin/prometheus as the
# package's `prometheus` user; docker-compose.yml gives it its scrape
# configuration (deploy/prometheus/prometheus.yml). promtool is in the image
# too (compose-test.sh queries Prometheus's HTTP API with it).
# See debootstrap.sh for the mirror it uses.
#
# Usage: scripts/docker/build-prometheus-image.sh [--force]
#        (without --force an existing image is kept, unless it was made from
#        another package list)
set -euo pipefail
LOG_TAG=prometheus-image
# shellcheck source=scripts/docker/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/docker/debootstrap.sh
source "$DOCKER_SCRIPTS/debootstrap.sh"

PACKAGES=prometheus
force=0
[[ "${1:-}" == "--force" ]] && force=1

main() {
    if ! engine_up; then
        "$DOCKER_SCRIPTS/ensure-engine.sh"
    fi
    if ((!force)) && image_is_current "$PROMETHEUS_IMAGE" "$PACKAGES"; then
        log "$PROMETHEUS_IMAGE exists already ($(docker image inspect -f '{{.Created}}' "$PROMETHEUS_IMAGE")); skipping debootstrap (use --force to rebuild)"
        return 0
    fi
    command -v debootstrap >/dev/null 2>&1 || "$DOCKER_SCRIPTS/ensure-engine.sh"
    debootstrap_image "$PROMETHEUS_IMAGE" "$PACKAGES" reactorbus-prometheus "prometheus promtool" \
        'USER prometheus' \
        'WORKDIR /var/lib/prometheus' \
        'EXPOSE 9090' \
        'ENTRYPOINT ["/usr/bin/prometheus"]' \
        'CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/var/lib/prometheus/metrics2"]'
}

main "$@"
