import CZMQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Waits until any of several sockets and file descriptors is ready.
///
/// Register sockets, raw file descriptors or ``Mailbox``es once; each registration returns an
/// index. The descriptor arrays are built at registration and reused by every
/// ``poll(timeout:)``, so polling allocates nothing. After a poll, ``events(at:)`` reports what
/// each item saw.
///
/// How: one `poll(2)` on the sockets' `ZMQ_FD` descriptors and the raw ones, and a socket's
/// `ZMQ_EVENTS` read only when its descriptor signalled or the socket was used since its last
/// read. libzmq's `zmq_poll` reads `ZMQ_EVENTS` of every socket before and after each wait,
/// and each read of an idle socket is two system calls (`getpid` and `poll` on its mailbox):
/// with five sockets, twenty per wake-up. The rule this relies on is libzmq's own for `ZMQ_FD`:
/// the descriptor is readable when the socket has commands to process (a message arrived, a
/// pipe opened or can take more), reading `ZMQ_EVENTS` processes them and clears it, and any
/// other call on the socket may process them too, which is why a used socket is asked again
/// before the poller waits (``ZMQSocket``'s operation count tells it), and so is one that was
/// ready when last asked.
///
/// Threads: like its sockets, a poller belongs to one loop thread (it is not `Sendable`).
/// The poller keeps registered sockets and mailboxes alive; polling a socket that was closed
/// meanwhile fails with `ENOTSOCK` instead of touching the freed libzmq pointer.
package final class ZMQPoller {
    /// What an item asked for and saw in the last poll, as libzmq's `ZMQ_POLLIN` /
    /// `ZMQ_POLLOUT` / `ZMQ_POLLERR` flags.
    private struct Item {
        let wanted: Int16
        var seen: Int16 = 0
    }

    // The tables a poll walks are `@exclusivity(unchecked)`: the poller belongs to one thread
    // and none of its methods calls out to code that could use it again while it changes one,
    // so accesses cannot overlap; their run-time checks showed in every poll of a busy
    // worker's loop.
    @exclusivity(unchecked) private var items: [Item] = []
    /// The descriptor each item waits on: a socket's `ZMQ_FD` (readable: check it), or the raw one.
    @exclusivity(unchecked) private var descriptors: [pollfd] = []
    /// Registered sockets, the handle each had when registered, and its operation count when
    /// its `ZMQ_EVENTS` were last read, by item index.
    @exclusivity(unchecked) private var sockets: [(socket: ZMQSocket, handle: UnsafeMutableRawPointer, checkedAt: UInt64)?] = []
    /// Objects whose file descriptor is polled and must outlive the poller's use of it.
    private var owners: [AnyObject] = []

    /// Creates an empty poller.
    package init() {}

    /// The number of registered items.
    package var count: Int { items.count }

    /// Adds a socket; returns its item index.
    ///
    /// - Throws: ``ZMQError`` with `ENOTSOCK` if the socket is already closed.
    @discardableResult
    package func register(_ socket: ZMQSocket, for events: ZMQPollEvents = .readable) throws(ZMQError) -> Int {
        let handle = try socket.openHandle("zmq_poll")
        let descriptor = try signalDescriptor(of: handle)
        items.append(Item(wanted: events.rawValue))
        descriptors.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0))
        // Never read yet: asked before the first wait.
        sockets.append((socket, handle, socket.operations &- 1))
        return items.count - 1
    }

    /// Adds a raw file descriptor (a pipe, eventfd, TCP socket …); returns its item index.
    ///
    /// The caller keeps the descriptor open for as long as the poller is used.
    @discardableResult
    package func register(fileDescriptor: Int32, for events: ZMQPollEvents = .readable) -> Int {
        items.append(Item(wanted: events.rawValue))
        var wanted: Int32 = 0
        if events.contains(.readable) { wanted |= Int32(POLLIN) }
        if events.contains(.writable) { wanted |= Int32(POLLOUT) }
        descriptors.append(pollfd(fd: fileDescriptor, events: Int16(wanted), revents: 0))
        sockets.append(nil)
        return items.count - 1
    }

    /// Adds a mailbox's wake-up descriptor for readability; returns its item index.
    ///
    /// When the item is readable, call ``Mailbox/drain()``. The poller keeps the mailbox alive.
    @discardableResult
    package func register<Element>(_ mailbox: Mailbox<Element>) -> Int {
        owners.append(mailbox)
        return register(fileDescriptor: mailbox.fileDescriptor, for: .readable)
    }

    /// Waits until at least one item is ready or `timeout` milliseconds pass.
    ///
    /// - Parameter timeout: milliseconds; 0 checks without waiting, -1 waits indefinitely.
    ///   An interrupted wait (`EINTR`) resumes with the time that remains.
    /// - Returns: the number of ready items (0 on timeout). Read each with ``events(at:)``.
    /// - Throws: ``ZMQError``: `ENOTSOCK` if a registered socket was closed, `ETERM` if a
    ///   socket's context was terminated.
    @discardableResult
    package func poll(timeout: Int) throws(ZMQError) -> Int {
        guard timeout >= 0 else { return try poll(nanoseconds: nil) }
        let (nanoseconds, overflow) = UInt64(timeout).multipliedReportingOverflow(by: 1_000_000)
        return try poll(nanoseconds: overflow ? nil : nanoseconds)
    }

    /// Waits until at least one item is ready or `timeout` nanoseconds pass (`nil`: without
    /// end), to the precision of the system's timers rather than to the millisecond: for a loop
    /// that wakes sleeping tasks at their deadlines. Otherwise as ``poll(timeout:)``.
    @discardableResult
    package func poll(nanoseconds timeout: UInt64?) throws(ZMQError) -> Int {
        for entry in sockets {
            if let entry, entry.socket.handle != entry.handle {
                throw ZMQError(code: ENOTSOCK, function: "zmq_poll")
            }
        }
        var ready = 0
        for index in items.indices {
            items[index].seen = 0
            // Used since it was last asked: its descriptor may no longer show what it holds.
            if let entry = sockets[index], entry.socket.operations != entry.checkedAt, try check(index) { ready += 1 }
        }
        var wait = ready > 0 ? 0 : timeout
        // Read only for a wait that may have to go on after a wake-up for nothing.
        let deadline = wait.flatMap { $0 > 0 ? MonotonicClock.nanoseconds() &+ $0 : nil }
        while true {
            let woken = descriptors.withUnsafeMutableBufferPointer { buffer in
                systemPoll(buffer.baseAddress, nfds_t(buffer.count), nanoseconds: wait)
            }
            if woken < 0 {
                guard errno == EINTR else { throw ZMQError(code: errno, function: "poll") }
            } else if woken > 0 {
                for index in descriptors.indices where descriptors[index].revents != 0 {
                    if sockets[index] != nil {
                        // Its commands are processed (and the descriptor cleared) by asking.
                        if items[index].seen == 0, try check(index) { ready += 1 }
                    } else {
                        let seen = Self.events(fromPoll: descriptors[index].revents) & (items[index].wanted | Int16(ZMQ_POLLERR))
                        if items[index].seen == 0 && seen != 0 { ready += 1 }
                        items[index].seen |= seen
                    }
                }
            }
            if ready > 0 || wait == 0 { return ready }
            // Interrupted, or a socket woke for something not asked for: wait for what is left.
            if let deadline {
                let now = MonotonicClock.nanoseconds()
                wait = now >= deadline ? 0 : deadline - now
            }
        }
    }

    /// Reads socket item `index`'s `ZMQ_EVENTS` into its `revents`; whether it has any asked for.
    private func check(_ index: Int) throws(ZMQError) -> Bool {
        guard let entry = sockets[index] else { return false }
        let events = try pendingEvents(of: entry.handle, function: "zmq_poll")
        items[index].seen = Int16(truncatingIfNeeded: events) & items[index].wanted
        let isReady = items[index].seen != 0
        // A ready socket stays ready until it is used, with its descriptor clear meanwhile:
        // asked again before the next wait, as a used one is.
        sockets[index]?.checkedAt = isReady ? entry.socket.operations &- 1 : entry.socket.operations
        return isReady
    }

    /// `poll(2)`'s flags as libzmq's.
    private static func events(fromPoll flags: Int16) -> Int16 {
        var events: Int16 = 0
        if flags & Int16(POLLIN) != 0 { events |= Int16(ZMQ_POLLIN) }
        if flags & Int16(POLLOUT) != 0 { events |= Int16(ZMQ_POLLOUT) }
        if flags & ~Int16(POLLIN | POLLOUT) != 0 { events |= Int16(ZMQ_POLLERR) }
        return events
    }

    /// What item `index` reported in the last ``poll(timeout:)``.
    package func events(at index: Int) -> ZMQPollEvents {
        ZMQPollEvents(rawValue: items[index].seen)
    }

    /// Whether item `index` was readable in the last ``poll(timeout:)``.
    package func isReadable(_ index: Int) -> Bool {
        events(at: index).contains(.readable)
    }
}

/// A socket's `ZMQ_FD`: readable when the socket has commands to process (see ``ZMQPoller``).
func signalDescriptor(of handle: UnsafeMutableRawPointer) throws(ZMQError) -> Int32 {
    var descriptor: Int32 = -1
    var size = MemoryLayout<Int32>.size
    try zmqCall("zmq_getsockopt") { zmq_getsockopt(handle, ZMQ_FD, &descriptor, &size) }
    return descriptor
}

/// A socket's `ZMQ_EVENTS` (`ZMQ_POLLIN`, `ZMQ_POLLOUT`); reading them processes the socket's
/// commands and clears its ``signalDescriptor(of:)``. A failure names `function`.
func pendingEvents(of handle: UnsafeMutableRawPointer, function: StaticString) throws(ZMQError) -> Int32 {
    var events: Int32 = 0
    var size = MemoryLayout<Int32>.size
    try zmqCall(function) { zmq_getsockopt(handle, ZMQ_EVENTS, &events, &size) }
    return events
}

/// `ppoll(2)` with a timeout in nanoseconds (`nil`: without end).
private func systemPoll(_ descriptors: UnsafeMutablePointer<pollfd>?, _ count: nfds_t, nanoseconds: UInt64?) -> Int32 {
    guard let nanoseconds else { return ppoll(descriptors, count, nil, nil) }
    var timeout = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    return ppoll(descriptors, count, &timeout, nil)
}
