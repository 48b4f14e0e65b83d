/// The snapshot ``SnapshotStore/loadNewest()`` chose, plus any newer ones it had to skip.
package struct LoadedSnapshot: Hashable, Sendable {
    /// The snapshot covers every journal record with LSN `<= lsn`; replay from `lsn + 1`.
    package var lsn: UInt64
    /// The opaque payload given to ``SnapshotStore/write(_:coveringThrough:)``.
    package var payload: [UInt8]
    /// Path of the file it came from.
    package var file: String
    /// Newer snapshots that failed their checks, newest first. Log them: a non-empty list means
    /// the disk damaged data after it was written.
    package var rejected: [SnapshotRejection]
}
