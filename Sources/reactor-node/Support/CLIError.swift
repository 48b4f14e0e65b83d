import ArgumentParsing

/// Why a command ended without doing its job, and with which exit code.
enum CLIError: Error, CustomStringConvertible {
    /// The command line was wrong (exit 64).
    case usage(String)
    /// The command ran and failed (exit 1).
    case failed(String)

    var description: String {
        switch self {
        case .usage(let message), .failed(let message): message
        }
    }

    var exitCode: Int32 {
        switch self {
        case .usage: UsageError.exitCode
        case .failed: 1
        }
    }
}
