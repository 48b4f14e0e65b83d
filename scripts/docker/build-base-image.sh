#!/usr/bin/env bash
# Builds the runtime base image locally, without any image registry:
# a Debian bookworm minbase root file system made by debootstrap (plus the
# two shared libraries reactor-node links: libzmq5, libmsgpackc2), imported
# as $BASE_IMAGE (reactorbus-base:bookworm).
#
# The Debian mirror is the one this machine's apt already uses (deb822
# /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list), read at run
# time; REACTORBUS_DEBIAN_MIRROR overrides it.
#
# Usage: scripts/docker/build-base-image.sh [--force]
#        (without --force an existing image is kept)
set -euo pipefail
LOG_TAG=base-image
# shellcheck source=scripts/docker/lib.sh
source "$(dirname "$0")/lib.sh"

SUITE=bookworm
PACKAGES=libzmq5,libmsgpackc2
force=0
[[ "${1:-}" == "--force" ]] && force=1

# Prints the first mirror URI that apt uses for $SUITE's main archive.
detect_mirror() {
    local f uri
    shopt -s nullglob
    for f in /etc/apt/sources.list.d/*.sources; do
        # deb822 stanzas are separated by blank lines; take a stanza whose
        # Types has "deb" and whose Suites has exactly $SUITE.
        uri="$(awk -v suite="$SUITE" '
            function flush() {
                if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " suite " ") && uris != "" && enabled != "no") {
                    split(uris, u, " "); print u[1]; found = 1; exit
                }
                types = ""; suites = ""; uris = ""; enabled = ""
            }
            /^[ \t]*#/ { next }
            /^[ \t]*$/ { flush(); next }
            tolower($1) == "types:"   { $1 = ""; types = $0 }
            tolower($1) == "suites:"  { $1 = ""; suites = $0 }
            tolower($1) == "uris:"    { $1 = ""; uris = $0 }
            tolower($1) == "enabled:" { enabled = tolower($2) }
            END { if (!found) flush() }
        ' "$f")"
        if [[ -n "$uri" ]]; then
            echo "${uri## }"
            return 0
        fi
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [[ -r "$f" ]] || continue
        # deb [options] URI SUITE COMPONENTS...
        uri="$(awk -v suite="$SUITE" '
            $1 == "deb" {
                i = 2
                if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
                if ($(i + 1) == suite) { print $i; exit }
            }' "$f")"
        if [[ -n "$uri" ]]; then
            echo "$uri"
            return 0
        fi
    done
    return 1
}

main() {
    if ! engine_up; then
        "$(dirname "$0")/ensure-engine.sh"
    fi
    if ((!force)) && docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
        log "$BASE_IMAGE exists already ($(docker image inspect -f '{{.Created}}' "$BASE_IMAGE")); skipping debootstrap (use --force to rebuild)"
        return 0
    fi
    command -v debootstrap >/dev/null 2>&1 || "$(dirname "$0")/ensure-engine.sh"

    local mirror
    mirror="${REACTORBUS_DEBIAN_MIRROR:-}"
    if [[ -z "$mirror" ]]; then
        mirror="$(detect_mirror)" || die "no '$SUITE' mirror found in /etc/apt/sources.list{,.d}; set REACTORBUS_DEBIAN_MIRROR"
    fi
    log "mirror (from apt sources): $mirror"

    local root start t0
    root="$(mktemp -d "${TMPDIR:-/var/tmp}/reactorbus-rootfs.XXXXXX")"
    # shellcheck disable=SC2064  # expand $root now
    trap "rm -rf '$root' '$root.log'" EXIT
    start=$SECONDS

    log "debootstrap --variant=minbase --include=$PACKAGES $SUITE into $root (takes a few minutes)"
    t0=$SECONDS
    # debootstrap is chatty: its full output goes to a file, its stage lines
    # (not the one-per-package lines) to the terminal as they happen.
    local rc=0
    debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$root" "$mirror" 2>&1 \
        | tee "$root.log" \
        | while IFS= read -r line; do
            case "$line" in
                *" the base system"*) log "  $line" ;;
                "I: Retrieving "[a-z0-9]* | "I: Validating "[a-z0-9]* | "I: Extracting "[a-z0-9]* | \
                    "I: Unpacking "[a-z0-9]* | "I: Configuring "[a-z0-9]*) ;;
                I:* | W:* | E:*) log "  $line" ;;
            esac
        done || rc=$?
    if ((rc != 0)) || [[ ! -x "$root/bin/sh" ]]; then
        tail -n 40 "$root.log" >&2
        rm -f "$root.log"
        die "debootstrap failed"
    fi
    log "debootstrap done in $((SECONDS - t0))s ($(grep -c '^I: Extracting' "$root.log") packages extracted)"
    rm -f "$root.log"

    # Trim what a runtime image never uses and what would leak the build
    # machine's identity into the image.
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/cache/apt/*.bin \
        "$root"/var/lib/apt/lists/* "$root"/var/log/* "$root"/tmp/* "$root"/debootstrap
    : >"$root/etc/resolv.conf"
    : >"$root/etc/hostname"
    # The binary needs exactly these; fail now rather than at container start.
    for lib in libzmq.so.5 libmsgpackc.so.2; do
        [[ -e "$root/usr/lib/x86_64-linux-gnu/$lib" || -n "$(find "$root/usr/lib" -name "$lib" -print -quit)" ]] \
            || die "$lib missing from the debootstrapped root"
    done
    log "root file system: $(du -sh "$root" | cut -f1)"

    log "importing as $BASE_IMAGE"
    t0=$SECONDS
    tar --numeric-owner -C "$root" -c . | docker import \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV LANG=C.UTF-8' \
        --change 'CMD ["/bin/bash"]' \
        --change "LABEL org.opencontainers.image.title=reactorbus-base org.opencontainers.image.description=debian-$SUITE-minbase+libzmq5+libmsgpackc2" \
        - "$BASE_IMAGE" >/dev/null
    log "imported in $((SECONDS - t0))s: $BASE_IMAGE $(docker image inspect -f '{{.Id}} {{.Size}}' "$BASE_IMAGE" | awk '{printf "%s, %.0f MB", substr($1,1,19), $2/1e6}')"
    log "base image ready in $((SECONDS - start))s"
}

main "$@"
