/// Where a ``SnapshotWriter`` puts snapshots: a ``SnapshotStore`` in production; tests put a
/// slow or failing one in its place.
///
/// Threads: not `Sendable`. The writer creates its destination on its own thread and uses it
/// only there.
package protocol SnapshotDestination: AnyObject {
    /// Durably writes `payload` as the snapshot covering journal records through `lsn`; see
    /// ``SnapshotStore/write(_:coveringThrough:)``.
    func write(_ payload: [UInt8], coveringThrough lsn: UInt64) throws -> SnapshotWriteResult
}

extension SnapshotStore: SnapshotDestination {}
