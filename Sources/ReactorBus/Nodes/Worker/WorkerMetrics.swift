import ReactorMetrics

/// A consistent snapshot of what a ``WorkerNode`` has done so far.
public struct WorkerMetrics: Sendable, Hashable {
    /// Jobs the authority sent, whether or not they were started.
    public var jobsReceived: UInt64 = 0
    /// Jobs reported with `done`.
    public var jobsDone: UInt64 = 0
    /// Jobs reported with `failed` (effect errors, undecodable effects, over capacity).
    public var jobsFailed: UInt64 = 0
    /// Jobs that were received but never started because the worker was stopping; `bye` hands
    /// them back to the authority.
    public var jobsDeclined: UInt64 = 0
    /// Jobs the authority cancelled while they ran or waited here: their tasks were cancelled
    /// and nothing more was sent for them.
    public var jobsCancelled: UInt64 = 0
    /// Mutations sent: in `emit` messages, and a job's last one inside its `done`.
    public var mutationsEmitted: UInt64 = 0
    /// `done` messages that carried the job's last mutation (an `emit` and a `done` in one
    /// message, to an authority that announced it reads them).
    public var combinedReports: UInt64 = 0
    /// Times the worker gave up on a silent authority and connected a new socket.
    public var reconnects: UInt64 = 0
    /// Of those, the times it moved to the next of several authority endpoints
    /// (``WorkerConfiguration/authorityEndpoint`` with commas).
    public var failovers: UInt64 = 0
    /// `ready` messages sent (the first one, after reconnects, after `unknown_worker`).
    public var registrations: UInt64 = 0
    /// Messages from the authority that did not follow the protocol.
    public var malformedMessages: UInt64 = 0
    /// Bytes of every frame read from and handed to the worker's socket.
    public var bytesReceived: UInt64 = 0
    public var bytesSent: UInt64 = 0
    /// How long jobs ran on this worker, from start to their report (every attempt, decoding
    /// and encoding included), in seconds; jobs abandoned or declined are not observed.
    public var effectDuration = Histogram(bounds: Histogram.Bounds.duration)
    /// Effects running right now.
    public var running: Int = 0
    /// Jobs waiting for a free slot (only when the authority sent more than the capacity).
    public var queued: Int = 0
    /// Whether the authority has answered the current `ready` with `welcome` and has not gone
    /// silent since.
    public var isRegistered: Bool = false
    /// Whether the effects' code runs on the worker's loop thread (``EffectThreads/loop``, until
    /// effects kept the loop too busy) rather than on the shared pool.
    public var effectsOnLoopThread: Bool = false

    /// An all-zero snapshot.
    public init() {}
}
