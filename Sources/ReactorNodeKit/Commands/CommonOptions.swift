import ArgumentParsing
import ReactorLog

/// Options every command shares.
enum CommonOptions {
    static let logLevel = Option.value("log-level", "LEVEL", help: "what goes to stderr: trace, debug, info, notice, warning, error", default: "info")
    /// `--max-message-bytes`, defaulting to the node configuration's own default.
    static func maxMessageBytes(default bytes: some BinaryInteger) -> Option {
        Option.value("max-message-bytes", "N", help: "largest message accepted on a socket", default: "\(bytes)")
    }

    /// The logger for `label` at the `--log-level` given.
    static func logger(_ label: String, _ arguments: ParsedArguments) throws(CLIError) -> Logger {
        let raw = arguments.string("log-level") ?? "info"
        guard let level = LogLevel(name: raw) else {
            throw .usage("\(arguments.command): '--log-level \(raw)' must be one of trace, debug, info, notice, warning, error")
        }
        return Logger(label: label, level: level)
    }

    static func int(_ arguments: ParsedArguments, _ name: String, in range: ClosedRange<Int>) throws(CLIError) -> Int {
        guard let value = try optionalInt(arguments, name, in: range) else { throw CLIError.usage("\(arguments.command): missing --\(name)") }
        return value
    }

    /// `--name`'s value, checked against `range`; `nil` when the option is not given and has
    /// no default.
    static func optionalInt(_ arguments: ParsedArguments, _ name: String, in range: ClosedRange<Int>) throws(CLIError) -> Int? {
        do {
            return try arguments.int(name, in: range)
        } catch {
            throw .usage(error.message)
        }
    }

    static func seconds(_ arguments: ParsedArguments, _ name: String) throws(CLIError) -> Duration? {
        do {
            return try arguments.seconds(name)
        } catch {
            throw .usage(error.message)
        }
    }
}
