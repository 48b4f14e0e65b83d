#ifndef REACTORBUS_CLIBFUZZER_SHIM_H
#define REACTORBUS_CLIBFUZZER_SHIM_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver entry point (compiler-rt, in the runtime `-sanitize=fuzzer` links).
/// SwiftPM renames an executable's Swift `main` and links it in as `main`, so libFuzzer's own
/// `main` is never used: the harnesses call this from their `@main` instead. Declared only;
/// nothing is linked unless the build uses `-sanitize=fuzzer`.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
