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
    public static let standardError = LogSink { line in StandardStream.write(line, to: 2) }

    /// Drops every line.
    public static let discard = LogSink { _ in }

    /// Hands every line to `collect` (for tests).
    public static func capture(_ collect: @escaping @Sendable (String) -> Void) -> LogSink {
        LogSink(collect)
    }
}
