#!/usr/bin/env bash
# Builds the libFuzzer harnesses and runs each for a bounded time (docs/FUZZING.md).
#
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   SECONDS_PER_TARGET  default 60 (`make fuzz`; `make fuzz-long` passes 600)
#   TARGET              msgpack, authority (default: both)
# Env:   FUZZ_RSS_LIMIT_MB=2048   libFuzzer's -rss_limit_mb (also its malloc limit)
#        FUZZ_TIMEOUT=10          seconds one input may take before it counts as a hang
#        FUZZ_JOBS=2              compiler jobs for the build
#
# Each target starts from its committed seed corpus (Fuzz/corpus/TARGET/, read only) plus what
# earlier runs found (.fuzz/corpus/TARGET/, where new inputs go; never committed). A crash, leak,
# trap or hang is saved under .fuzz/artifacts/TARGET/ and its path printed. The last line is
# `fuzz: N passed, M failed` (one per target); the exit status is non-zero if any target failed.
set -uo pipefail

cd "$(dirname "$0")/.."
ROOT="$PWD"
SWIFT="${SWIFT:-swift}"
SECONDS_PER_TARGET="${1:-60}"
shift || true
TARGETS=("$@")
((${#TARGETS[@]})) || TARGETS=(msgpack authority)
RSS_LIMIT_MB="${FUZZ_RSS_LIMIT_MB:-2048}"
INPUT_TIMEOUT="${FUZZ_TIMEOUT:-10}"
SCRATCH="$ROOT/.build/fuzz"
WORK="$ROOT/.fuzz"

log() { echo "[fuzz] $*"; }

[[ "$SECONDS_PER_TARGET" =~ ^[0-9]+$ ]] || { log "seconds must be a whole number, got '$SECONDS_PER_TARGET'"; exit 2; }
for target in "${TARGETS[@]}"; do
    [[ -d "Fuzz/corpus/$target" ]] || { log "unknown target '$target' (msgpack, authority)"; exit 2; }
done

# System packages the package itself needs (libzmq, msgpack-c, pkg-config), installed when missing.
scripts/ensure-deps.sh || exit 1

# libFuzzer and ASan come with the Swift toolchain (its clang resource directory), not from apt:
# Debian's libclang-rt packages serve Debian's clang, which swiftc does not use.
swiftc_path="$(command -v "${SWIFT}c" || command -v swiftc || true)"
toolchain="$(dirname "$(dirname "$(readlink -f "${swiftc_path:-/nonexistent}")")")"
if ! compgen -G "$toolchain/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a" >/dev/null \
    && ! compgen -G "$toolchain/lib/swift/clang/lib/linux/libclang_rt.fuzzer-*.a" >/dev/null; then
    log "no libFuzzer runtime (libclang_rt.fuzzer) in the Swift toolchain at $toolchain: use a swift.org toolchain for Linux"
    echo "fuzz: 0 passed, ${#TARGETS[@]} failed"
    exit 1
fi

build_flags=(-c release --scratch-path "$SCRATCH" -j "${FUZZ_JOBS:-2}"
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DREACTORBUS_LIBFUZZER)
build_log="$WORK/logs/build.log"
mkdir -p "$WORK/logs"
t0=$SECONDS
for target in "${TARGETS[@]}"; do
    log "building fuzz-$target (swift build ${build_flags[*]} --product fuzz-$target)"
    if ! "$SWIFT" build "${build_flags[@]}" --product "fuzz-$target" >"$build_log" 2>&1; then
        tail -n 40 "$build_log"
        log "build of fuzz-$target failed (full log: $build_log)"
        echo "fuzz: 0 passed, ${#TARGETS[@]} failed"
        exit 1
    fi
done
bin_dir="$("$SWIFT" build "${build_flags[@]}" --show-bin-path)"
log "built in $((SECONDS - t0)) s: $bin_dir"

# The Swift runtime's own crash handler would race libFuzzer's and trip ASan; libFuzzer reports.
export SWIFT_BACKTRACE=enable=no
# Shorter allocation stacks and a smaller quarantine: ~4x less memory, a little faster; Swift code
# is memory-safe, so ASan is here for the C parts (msgpack-c, unsafe buffers) and LeakSanitizer.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:malloc_context_size=8:quarantine_size_mb=32}"

passed=0
failed=0
for target in "${TARGETS[@]}"; do
    corpus="$WORK/corpus/$target"
    artifacts="$WORK/artifacts/$target"
    logfile="$WORK/logs/$target.log"
    mkdir -p "$corpus" "$artifacts" "$(dirname "$logfile")"
    seeds=$(find "Fuzz/corpus/$target" -type f | wc -l)
    found_before=$(find "$corpus" -type f | wc -l)
    log "fuzz-$target: ${SECONDS_PER_TARGET} s from $seeds committed seeds + $found_before found earlier"
    # The first corpus directory receives new inputs; the committed one is only read.
    timeout --signal=INT --kill-after=30 "$((SECONDS_PER_TARGET + 300))" \
        "$bin_dir/fuzz-$target" "$corpus" "Fuzz/corpus/$target" \
        -dict="Fuzz/$target.dict" \
        -max_total_time="$SECONDS_PER_TARGET" \
        -rss_limit_mb="$RSS_LIMIT_MB" \
        -timeout="$INPUT_TIMEOUT" \
        -artifact_prefix="$artifacts/" \
        -print_final_stats=1 \
        -reload=0 \
        2>&1 | tee "$logfile" | grep --line-buffered -E '^#[0-9]+[[:space:]]+(INITED|pulse|DONE)' | sed -u "s/^/[fuzz-$target] /"
    status=${PIPESTATUS[0]}

    runs=$(grep -oE '^stat::number_of_executed_units:[[:space:]]*[0-9]+' "$logfile" | grep -oE '[0-9]+$' | tail -n 1)
    speed=$(grep -oE '^stat::average_exec_per_sec:[[:space:]]*[0-9]+' "$logfile" | grep -oE '[0-9]+$' | tail -n 1)
    cov=$(grep -oE 'cov: [0-9]+' "$logfile" | tail -n 1 | grep -oE '[0-9]+')
    found_after=$(find "$corpus" -type f | wc -l)
    summary="${runs:-?} runs, ${speed:-?} exec/s, coverage ${cov:-?}, corpus $seeds seeds + $found_before -> $found_after found"
    if ((status == 0)); then
        passed=$((passed + 1))
        log "fuzz-$target: ok: $summary"
    else
        failed=$((failed + 1))
        grep -E 'FUZZ FAILURE|Fatal error|ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|SUMMARY' "$logfile" | head -n 8
        reproducer=$(grep -oE 'Test unit written to [^ ]+' "$logfile" | tail -n 1 | sed 's/Test unit written to //')
        log "fuzz-$target: FAILED (exit $status): $summary"
        log "  log: $logfile"
        if [[ -n "$reproducer" ]]; then
            log "  reproducer: $reproducer"
            log "  rerun: $bin_dir/fuzz-$target $reproducer   (or, without sanitizers: swift run fuzz-$target $reproducer)"
        fi
    fi
done

echo "fuzz: $passed passed, $failed failed"
((failed == 0))
