/// Where a ``SnapshotWriter`` puts snapshots: a ``SnapshotStore`` in production; tests put a
/// slow or failing one in its place.
///
/// Threads: not `Sendable`. The writer creates its destination on its own thread and uses it
/// only there.
package protocol SnapshotDestination: AnyObject {
    /// Durably writes `payload` (valid only during the call) as the snapshot covering journal
    /// records through `lsn`; see ``SnapshotStore/write(_:coveringThrough:)-(UnsafeRawBufferPointer,_)``.
    func write(_ payload: UnsafeRawBufferPointer, coveringThrough lsn: UInt64) throws -> SnapshotWriteResult
}

extension SnapshotStore: SnapshotDestination {}
