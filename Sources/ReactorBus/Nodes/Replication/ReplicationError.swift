/// Why a standby cannot follow its primary, or a node cannot be promoted.
public enum ReplicationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The primary refused the standby's `hello` (`code` as in docs/PROTOCOL.md, "Replication").
    case refused(code: String, message: String)
    /// Records arrived that do not follow the journal's last one.
    case outOfSequence(expected: UInt64, received: UInt64)
    /// A standby needs a data directory (`--data`): it keeps its own journal.
    case needsDataDirectory
    /// `--replication-mode sync` or `--replication` on a node without a data directory.
    case primaryNeedsDataDirectory
    /// The node stopped (or failed) before it could be promoted.
    case notPromoted(String)

    public var description: String {
        switch self {
        case .refused(let code, let message): "the primary refused this standby (\(code)): \(message)"
        case .outOfSequence(let expected, let received): "replicated records start at LSN \(received), the journal expects \(expected)"
        case .needsDataDirectory: "a standby keeps its own journal: give it --data DIR"
        case .primaryNeedsDataDirectory: "replication streams the journal: give the primary --data DIR"
        case .notPromoted(let why): "not promoted: \(why)"
        }
    }
}
