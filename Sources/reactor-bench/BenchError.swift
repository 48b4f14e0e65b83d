/// Why the bench could not go on.
enum BenchError: Error, CustomStringConvertible {
    /// A child could not be started.
    case spawn(String)
    /// A phase did not finish in its time, or a child failed; the message says which.
    case phase(String)
    /// A program the bench runs is missing (`reactor-node` not built next to it).
    case unavailable(String)

    var description: String {
        switch self {
        case .spawn(let message): "cannot start a child process: \(message)"
        case .phase(let message): message
        case .unavailable(let message): message
        }
    }

    /// The process's exit status for this error: `EX_UNAVAILABLE` (69) for a missing program.
    var exitCode: Int32 {
        if case .unavailable = self { 69 } else { 1 }
    }
}
