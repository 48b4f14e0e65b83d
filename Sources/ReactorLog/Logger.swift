#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes one line per event, with time, level and source, to standard error.
///
/// Logs are for people and go to stderr; data goes to stdout. Each event is written with one
/// `write(2)` call, so lines from different threads never interleave. A `Logger` is a small value:
/// pass it around, derive one per component with ``labelled(_:)``.
public struct Logger: Sendable {
    /// Where the logger writes; tests capture lines with ``LogSink/capture(_:)``.
    public let sink: LogSink
    /// Events below this level are dropped.
    public var level: LogLevel
    /// The component that logs (`authority`, `worker w1`).
    public var label: String

    /// Creates a logger.
    public init(label: String, level: LogLevel = .info, sink: LogSink = .standardError) {
        self.label = label
        self.level = level
        self.sink = sink
    }

    /// The same logger for another component.
    public func labelled(_ label: String) -> Logger {
        Logger(label: label, level: level, sink: sink)
    }

    /// Whether an event at `level` would be written (check before building costly messages).
    public func isEnabled(_ level: LogLevel) -> Bool { level >= self.level }

    /// Logs one event at `level`.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard isEnabled(level) else { return }
        sink.write("\(Self.timestamp()) \(level) \(label): \(message())\n")
    }

    public func trace(_ message: @autoclosure () -> String) { log(.trace, message()) }
    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func notice(_ message: @autoclosure () -> String) { log(.notice, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }

    /// UTC time as `2026-12-02T18:50:00.123Z`.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int = 2) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let millis = Int32(now.tv_nsec / 1_000_000)
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1))-\(pad(parts.tm_mday))T"
            + "\(pad(parts.tm_hour)):\(pad(parts.tm_min)):\(pad(parts.tm_sec)).\(pad(millis, 3))Z"
    }
}
