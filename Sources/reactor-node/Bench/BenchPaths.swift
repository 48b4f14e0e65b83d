import Foundation
import Glibc

/// Where the bench finds itself and puts its temporary files.
enum BenchPaths {
    /// This binary (children are more of it).
    static let reactorNode: String =
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]

    /// A fresh directory for this run (journals, logs); removed by ``removeRunDirectory()``.
    static let runDirectory: String = {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(base)/reactor-bench-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { buffer in
            guard let made = mkdtemp(buffer.baseAddress!) else { return "\(base)/reactor-bench-\(getpid())" }
            return String(cString: made)
        }
    }()

    /// A path inside the run directory.
    static func temporaryFile(_ name: String) -> String {
        "\(runDirectory)/\(name.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "-" }.map(String.init).joined())"
    }

    /// Deletes the run directory and everything in it.
    static func removeRunDirectory() {
        try? FileManager.default.removeItem(atPath: runDirectory)
    }
}
