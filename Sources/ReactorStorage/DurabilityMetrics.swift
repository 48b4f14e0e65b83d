/// Counters kept by a ``Journal`` so benchmarks can relate throughput to fsync cost.
///
/// A plain value: read ``Journal/metrics`` to get a copy. Counters start at zero when the
/// journal is opened and cover only that journal instance (recovery work is not counted).
public struct DurabilityMetrics: Sendable, Hashable, CustomStringConvertible {
    /// Records accepted by `append` (including ones not yet committed).
    public var recordsAppended: UInt64 = 0
    /// Record bytes (frames: headers and payloads) handed to `write(2)`; segment headers excluded.
    public var bytesWritten: UInt64 = 0
    /// Calls to ``Journal/commit()`` that had records to write.
    public var commits: UInt64 = 0
    /// `fdatasync`/`fsync` calls on segments and on the journal directory.
    public var fsyncs: UInt64 = 0
    /// Wall time spent inside those sync calls.
    public var fsyncTime: Duration = .zero

    /// Starts with every counter at zero.
    public init() {}

    /// Mean time per sync call, or zero before the first one.
    public var meanFsyncTime: Duration {
        fsyncs == 0 ? .zero : fsyncTime / Int(fsyncs)
    }

    public var description: String {
        "\(recordsAppended) records, \(bytesWritten) bytes, \(commits) commits, \(fsyncs) fsyncs in \(fsyncTime)"
    }
}
