import Foundation
import Glibc

/// Where the bench finds its programs and puts its temporary files.
enum BenchPaths {
    /// This binary: the client, observer, ping and raw-libzmq peers are more of it (`peer ROLE`).
    static let benchBinary: String =
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]

    /// The `reactor-node` built next to this binary (SwiftPM puts every product of a build in
    /// one directory): the authorities and workers the bench measures.
    static let reactorNode: String = URL(fileURLWithPath: benchBinary).deletingLastPathComponent().appendingPathComponent("reactor-node").path

    /// Fails with a hint when `reactor-node` was not built next to this binary.
    static func checkReactorNode() throws {
        guard FileManager.default.isExecutableFile(atPath: reactorNode) else {
            throw BenchError.unavailable("no reactor-node next to reactor-bench (\(reactorNode)); build both: swift build -c release --product reactor-node")
        }
    }

    /// A fresh directory for this run (journals, logs); removed by ``removeRunDirectory()``.
    static let runDirectory: String = {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(base)/reactor-bench-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress, let made = mkdtemp(base) else { return "\(base)/reactor-bench-\(getpid())" }
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
