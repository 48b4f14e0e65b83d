import MessagePack
import ReactorLog

/// The bench's data to stdout (the table, the JSON, its peers' events) and progress to stderr,
/// one whole line per `write(2)`, as reactor-node's own `Output` writes: the bench reads its
/// peers' stdout line by line as they write it.
enum Output {
    /// Writes one line of data to stdout.
    static func line(_ text: String) { StandardStream.write(text + "\n", to: 1) }

    /// Writes one line to stderr (progress, usage and fatal errors).
    static func error(_ text: String) { StandardStream.write(text + "\n", to: 2) }

    /// A peer role gives up: says why on stderr and as a `failed` event on stdout, and returns
    /// the exit code (1).
    static func failed(role: String, _ why: String) -> Int32 {
        error("peer \(role): \(why)")
        line(MessagePackValue.object([("event", "failed"), ("error", .string(why))]).rendered)
        return 1
    }
}
