#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where log lines go.
public struct LogSink: Sendable {
    private let writeLine: @Sendable (String) -> Void

    /// Creates a sink from a function that takes one complete line (ending in a newline).
    public init(_ writeLine: @escaping @Sendable (String) -> Void) {
        self.writeLine = writeLine
    }

    /// Writes `line` as it is.
    public func write(_ line: String) { writeLine(line) }

    /// Standard error, one `write(2)` per line.
    public static let standardError = LogSink { line in
        var line = line
        line.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(2, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }

    /// Drops every line.
    public static let discard = LogSink { _ in }

    /// Hands every line to `collect` (for tests).
    public static func capture(_ collect: @escaping @Sendable (String) -> Void) -> LogSink {
        LogSink(collect)
    }
}
