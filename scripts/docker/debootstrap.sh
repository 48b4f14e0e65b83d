# shellcheck shell=bash
# Making a runtime image without any image registry: a Debian $SUITE minbase
# root file system made by debootstrap with a few packages, trimmed, checked
# and imported with `docker import`. Sourced by build-base-image.sh and
# build-prometheus-image.sh (after lib.sh), never run.
#
# The Debian mirror is the one this machine's apt already uses (deb822
# /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list), read at run
# time; REACTORBUS_DEBIAN_MIRROR overrides it.

SUITE=bookworm

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

# Whether IMAGE exists and was made from exactly PACKAGES (its label says so);
# an image made before the package list changed is made again.
image_is_current() {
    local image="$1" packages="$2" have
    have="$(docker image inspect -f '{{index .Config.Labels "org.reactorbus.packages"}}' "$image" 2>/dev/null)" || return 1
    [[ "$have" == "$packages" ]]
}

# debootstrap_image IMAGE PACKAGES TITLE REQUIRED [CHANGE...]
#   Debootstraps $SUITE minbase with PACKAGES (comma-separated, their
#   dependencies resolved), fails unless every file name in REQUIRED (a
#   space-separated list) exists somewhere under the root's /usr, and imports
#   the root as IMAGE with the Dockerfile instructions CHANGE... (ENTRYPOINT,
#   CMD, USER, ...), labelled with TITLE and PACKAGES.
debootstrap_image() {
    local image="$1" packages="$2" title="$3" required="$4"
    shift 4
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

    log "debootstrap --variant=minbase --include=$packages $SUITE into $root (takes a few minutes)"
    t0=$SECONDS
    # debootstrap is chatty: its full output goes to a file, its stage lines
    # (not the one-per-package lines) to the terminal as they happen.
    local rc=0
    debootstrap --variant=minbase --include="$packages" "$SUITE" "$root" "$mirror" 2>&1 \
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
    # The programs need exactly these; fail now rather than at container start.
    local file
    for file in $required; do
        [[ -n "$(find "$root/usr" -name "$file" -print -quit)" ]] || die "$file missing from the debootstrapped root"
    done
    log "root file system: $(du -sh "$root" | cut -f1)"

    log "importing as $image"
    t0=$SECONDS
    local changes=(--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
        --change 'ENV LANG=C.UTF-8')
    local change
    for change in "$@"; do changes+=(--change "$change"); done
    tar --numeric-owner -C "$root" -c . | docker import "${changes[@]}" \
        --change "LABEL org.opencontainers.image.title=$title org.opencontainers.image.description=debian-$SUITE-minbase+${packages//,/+} org.reactorbus.packages=$packages" \
        - "$image" >/dev/null
    log "imported in $((SECONDS - t0))s: $image $(docker image inspect -f '{{.Id}} {{.Size}}' "$image" | awk '{printf "%s, %.0f MB", substr($1,1,19), $2/1e6}')"
    rm -rf "$root"
    trap - EXIT
    log "$image ready in $((SECONDS - start))s"
}
