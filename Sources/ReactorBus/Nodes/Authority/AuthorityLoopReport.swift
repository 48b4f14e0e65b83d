/// What the authority's loop saw while carrying out outboxes, handed back to the engine as input.
///
/// The engine is the one writer of ``AuthorityMetrics``: the loop and the durability never
/// change a counter, they report what happened (a commit, a snapshot written, a reply refused)
/// and the engine counts it in ``AuthorityEngine/absorb(_:)``.
package struct AuthorityLoopReport: Equatable, Sendable {
    /// Journal records committed.
    package var journalRecords: UInt64 = 0
    /// Journal commits.
    package var journalCommits: UInt64 = 0
    /// Snapshots written to the data directory.
    package var snapshotsWritten: UInt64 = 0
    /// Snapshots published on the feed.
    package var snapshotsPublished: UInt64 = 0
    /// CURVE handshakes refused (from the sockets' monitors).
    package var handshakesRefused: UInt64 = 0
    /// Request replies refused with `busy` for their client's unread bytes.
    package var repliesRefusedBytes: UInt64 = 0
    /// The feed's high-water mark now, if the loop measured it.
    package var feedHighWaterMark: UInt64?

    /// Nothing seen yet.
    package init() {}

    /// Whether there is nothing to count.
    package var isEmpty: Bool { self == AuthorityLoopReport() }

    /// Adds `other`'s counts to these; its high-water mark, if any, replaces this one.
    package mutating func merge(_ other: AuthorityLoopReport) {
        journalRecords += other.journalRecords
        journalCommits += other.journalCommits
        snapshotsWritten += other.snapshotsWritten
        snapshotsPublished += other.snapshotsPublished
        handshakesRefused += other.handshakesRefused
        repliesRefusedBytes += other.repliesRefusedBytes
        if let mark = other.feedHighWaterMark { feedHighWaterMark = mark }
    }
}
