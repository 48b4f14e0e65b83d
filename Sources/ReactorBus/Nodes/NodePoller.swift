import ZeroMQ

/// The one receive loop every node turns: wait for a socket, a mailbox, a wakeup or a timer,
/// then read up to a batch from each ready socket.
///
/// One turn of a loop is: ``wait(until:longest:)`` (the next timer of the loop is the deadline;
/// a ``NodeRuntime/stop()`` wakes it through the wakeup mailbox, which is registered first and
/// drained here), then for each socket ``receive(_:at:batch:)`` and `while let frames = try
/// batch.next()`, then the loop's timers. Reading at most a batch per socket keeps mailboxes and
/// timers served under a flood. Not thread-safe: used on the node's thread only.
final class NodePoller {
    private let poller = ZMQPoller()
    private let wakeup: Mailbox<Void>
    private let wakeupIndex: Int

    /// A poller with only the node's wakeup mailbox registered.
    init(wakeup: Mailbox<Void>) {
        self.wakeup = wakeup
        wakeupIndex = poller.register(wakeup)
    }

    /// A new poller with only the wakeup registered, for a loop that replaces its sockets.
    func renewed() -> NodePoller {
        NodePoller(wakeup: wakeup)
    }

    /// Registers a socket for reading; returns its index for ``isReadable(_:)``.
    func register(_ socket: ZMQSocket) throws(ZMQError) -> Int {
        try poller.register(socket)
    }

    /// Registers a mailbox; returns its index for ``isReadable(_:)``.
    func register<Element>(_ mailbox: Mailbox<Element>) -> Int {
        poller.register(mailbox)
    }

    /// Waits until something registered is readable, the node is woken, `deadline`
    /// (``MonotonicClock`` milliseconds) or `wakeAt` (its nanoseconds, for a timer that must not
    /// run a millisecond late) passes, but at most `longest` milliseconds; drains a wakeup.
    func wait(until deadline: UInt64, longest: UInt64 = 1_000, orUntilNanosecond wakeAt: UInt64 = .max) throws(ZMQError) {
        let now = MonotonicClock.nanoseconds()
        let end = min(Self.nanoseconds(deadline), wakeAt)
        _ = try poller.poll(nanoseconds: min(end > now ? end - now : 0, Self.nanoseconds(longest)))
        if poller.isReadable(wakeupIndex) { _ = wakeup.drain() }
    }

    /// `milliseconds` in nanoseconds, `.max` past what a `UInt64` holds.
    private static func nanoseconds(_ milliseconds: UInt64) -> UInt64 {
        let (nanoseconds, overflow) = milliseconds.multipliedReportingOverflow(by: 1_000_000)
        return overflow ? .max : nanoseconds
    }

    /// Whether the item at `index` was readable at the last wait.
    func isReadable(_ index: Int) -> Bool {
        poller.isReadable(index)
    }

    /// Up to `batch` messages from `socket` if it was readable at the last wait; none otherwise.
    func receive(_ socket: ZMQSocket, at index: Int, batch: Int) -> ReceiveBatch {
        ReceiveBatch(socket: socket, remaining: poller.isReadable(index) ? batch : 0)
    }
}

/// Messages read from one socket in one turn, at most a batch (see ``NodePoller``).
struct ReceiveBatch {
    let socket: ZMQSocket
    var remaining: Int

    /// The next message, or `nil` once the batch is read or the socket has nothing more now.
    mutating func next() throws(ZMQError) -> [[UInt8]]? {
        guard remaining > 0 else { return nil }
        remaining -= 1
        guard let frames = try socket.tryReceiveMultipart() else {
            remaining = 0
            return nil
        }
        return frames
    }
}
