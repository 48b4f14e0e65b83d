import ArgumentParsing
import Glibc
import ReactorBus
import ReactorStorage
import ReactorWire
import ZeroMQ

/// Why a command ended without doing its job, and with which exit code.
///
/// Exit codes follow BSD's sysexits(3), so that a supervisor (systemd's
/// `RestartPreventExitStatus=`, a compose `restart:` policy, a shell script) can tell a fault that
/// a restart may cure from one that needs an operator. The README's "Exit codes" table lists them.
enum CLIError: Error, CustomStringConvertible {
    /// The command line was wrong (exit 64, `EX_USAGE`).
    case usage(String)
    /// The command ran and failed for a reason not covered below (exit 1).
    case failed(String)
    /// Data on disk is damaged and the command refuses to serve it (exit 65, `EX_DATAERR`).
    case dataError(String)
    /// A peer this command needs is not there or refused it (exit 69, `EX_UNAVAILABLE`).
    case unavailable(String)
    /// A file or directory could not be created or written, e.g. a full disk (exit 73, `EX_CANTCREAT`).
    case cannotWrite(String)
    /// An input/output error other than the above (exit 74, `EX_IOERR`).
    case ioError(String)
    /// A peer refused this node's configuration, e.g. a worker for another app (exit 78, `EX_CONFIG`).
    case configuration(String)
    /// The node stopped for a condition that may pass, e.g. an elected authority that lost its
    /// lease (exit 75, `EX_TEMPFAIL`).
    case temporary(String)

    var description: String {
        switch self {
        case .usage(let message), .failed(let message), .dataError(let message), .unavailable(let message),
             .cannotWrite(let message), .ioError(let message), .configuration(let message), .temporary(let message):
            message
        }
    }

    var exitCode: Int32 {
        switch self {
        case .usage: UsageError.exitCode
        case .failed: 1
        case .dataError: 65
        case .unavailable: 69
        case .cannotWrite: 73
        case .ioError: 74
        case .configuration: 78
        case .temporary: 75
        }
    }

    /// The exit a node's own failure calls for, with `message` (which should name the command and
    /// what it was doing) before the error's description.
    init(_ message: String, _ error: any Error) {
        let text = "\(message): \(error)"
        switch error {
        case let error as PersistenceError:
            self = Self.classify(error, text)
        case is RecoveryError, is SchemaError:
            self = .dataError(text)
        case is LeadershipLost:
            self = .temporary(text)
        case let error as ProtocolError where error.code == .wrongApp:
            self = .configuration(text)
        case let error as ZMQError where error.code == ZMQError.Code.invalidArgument || error.code == ZMQError.Code.protocolNotSupported:
            self = .usage(text)
        case let error as ZMQError where error.code == EADDRINUSE || error.code == EADDRNOTAVAIL:
            self = .unavailable(text + "; stop whatever holds that endpoint or choose another")
        default:
            self = .failed(text)
        }
    }

    private static func classify(_ error: PersistenceError, _ text: String) -> CLIError {
        if error.isDataDamage { return .dataError(text) }
        switch error {
        case .journalFailed(_, let cause):
            return classify(cause, text)
        case .io(_, _, let code) where code == ENOSPC || code == EDQUOT || code == EROFS:
            return .cannotWrite(text + "; free space in the data directory (or give it a larger volume), then start the authority again: nothing unjournaled was acknowledged")
        case .io:
            return .ioError(text)
        case .locked:
            return .unavailable(text)
        case .unsupportedFormat, .appMismatch, .notAJournalSegment:
            return .dataError(text)
        default:
            return .failed(text)
        }
    }
}
