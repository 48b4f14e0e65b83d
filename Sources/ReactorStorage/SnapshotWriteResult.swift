/// What ``SnapshotStore/write(_:coveringThrough:)`` did.
package struct SnapshotWriteResult: Hashable, Sendable {
    /// Path of the new snapshot.
    package var file: String
    /// LSNs of the snapshots now on disk, oldest first (at most ``SnapshotStore/retainedCount``).
    package var retained: [UInt64]
    /// Older snapshot files deleted.
    package var deleted: [String]
    /// The highest LSN the journal may be compacted through while keeping a fallback: the
    /// oldest retained snapshot's LSN once two are retained, else 0 (do not compact yet).
    /// Compacting through the newest instead would leave a hole if the newest turned out corrupt.
    package var compactableThrough: UInt64
}
