#if REACTORBUS_LIBFUZZER
internal import CLibFuzzer
#endif
import Foundation

/// The one-input entry point of a harness, as libFuzzer calls it.
public typealias FuzzTarget = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

/// Runs a harness: under libFuzzer (built with `-DREACTORBUS_LIBFUZZER -sanitize=fuzzer`) hands
/// the command line to libFuzzer's driver; otherwise replays every file named on the command line
/// (directories recursively) once, so that a normal build can rerun a corpus or a crash file.
public enum FuzzDriver {
    public static func main(_ target: FuzzTarget) -> Never {
        #if REACTORBUS_LIBFUZZER
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, target))
        #else
        exit(replay(Array(CommandLine.arguments.dropFirst()), target))
        #endif
    }

    /// Runs `target` on each file under `paths` (flags starting with `-` are ignored, as are
    /// libFuzzer's); returns the exit status.
    public static func replay(_ paths: [String], _ target: FuzzTarget) -> Int32 {
        let files = paths.filter { !$0.hasPrefix("-") }.flatMap(Self.files(under:)).sorted()
        guard !files.isEmpty else {
            FileHandle.standardError.write(Data("usage: \(CommandLine.arguments.first ?? "fuzz") FILE|DIR... (replays inputs; build with scripts/fuzz.sh to fuzz)\n".utf8))
            return 2
        }
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                FileHandle.standardError.write(Data("cannot read \(file)\n".utf8))
                return 1
            }
            let bytes = [UInt8](data)
            if fuzzVerbose { print("== \(file) (\(bytes.count) bytes)") }
            _ = bytes.withUnsafeBufferPointer { target($0.baseAddress, $0.count) }
        }
        print("replayed \(files.count) input\(files.count == 1 ? "" : "s"): no failure")
        return 0
    }

    private static func files(under path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return [path] }
        guard isDirectory.boolValue else { return [path] }
        let entries = (try? FileManager.default.subpathsOfDirectory(atPath: path)) ?? []
        return entries.map { path + "/" + $0 }.filter { entry in
            var nested: ObjCBool = false
            return FileManager.default.fileExists(atPath: entry, isDirectory: &nested) && !nested.boolValue
        }
    }
}

/// Whether the harness should say what each input did (`REACTORBUS_FUZZ_VERBOSE=1`, for replays
/// when checking what a seed reaches; never while fuzzing, where it would only slow things down).
public let fuzzVerbose = ProcessInfo.processInfo.environment["REACTORBUS_FUZZ_VERBOSE"].map { !$0.isEmpty && $0 != "0" } ?? false

/// Stops the process when a harness finds a bug: prints `message` and the input (hex), then traps,
/// so that libFuzzer saves the input as a crash file.
public func fuzzFailure(_ message: String, input: UnsafeRawBufferPointer? = nil, file: StaticString = #fileID, line: UInt = #line) -> Never {
    var text = "FUZZ FAILURE (\(file):\(line)): \(message)\n"
    if let input { text += "input (\(input.count) bytes): " + input.map { String(format: "%02x", $0) }.joined() + "\n" }
    FileHandle.standardError.write(Data(text.utf8))
    fatalError(message, file: file, line: line)
}

/// `fuzzFailure` unless `condition` holds.
@inline(__always)
public func fuzzCheck(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
    if !condition() { fuzzFailure(message(), file: file, line: line) }
}
