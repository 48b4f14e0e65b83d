/// How important a log event is; a logger drops events below its level.
public enum LogLevel: Int, Comparable, Sendable, CaseIterable, CustomStringConvertible {
    case trace, debug, info, notice, warning, error

    /// Parses `trace|debug|info|notice|warning|error` (also `warn`), case-insensitively.
    public init?(name: String) {
        switch name.lowercased() {
        case "trace": self = .trace
        case "debug": self = .debug
        case "info": self = .info
        case "notice": self = .notice
        case "warning", "warn": self = .warning
        case "error": self = .error
        default: return nil
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .trace: "TRACE"
        case .debug: "DEBUG"
        case .info: "INFO"
        case .notice: "NOTICE"
        case .warning: "WARN"
        case .error: "ERROR"
        }
    }
}
