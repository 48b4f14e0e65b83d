/// The snapshot ``SnapshotStore/loadNewest()`` chose, plus any newer ones it had to skip.
public struct LoadedSnapshot: Hashable, Sendable {
    /// The snapshot covers every journal record with LSN `<= lsn`; replay from `lsn + 1`.
    public var lsn: UInt64
    /// The opaque payload given to ``SnapshotStore/write(_:coveringThrough:)``.
    public var payload: [UInt8]
    /// Path of the file it came from.
    public var file: String
    /// Newer snapshots that failed their checks, newest first. Log them: a non-empty list means
    /// the disk damaged data after it was written.
    public var rejected: [SnapshotRejection]
}
