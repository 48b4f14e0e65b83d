/// Why the bench could not go on.
enum BenchError: Error, CustomStringConvertible {
    /// A child could not be started.
    case spawn(String)
    /// A phase did not finish in its time, or a child failed; the message says which.
    case phase(String)

    var description: String {
        switch self {
        case .spawn(let message): "cannot start a child process: \(message)"
        case .phase(let message): message
        }
    }
}
