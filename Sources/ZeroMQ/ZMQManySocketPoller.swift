#if os(Linux)
import CZMQ
import Glibc

/// Waits on many sockets of which few are ready at a time (a process that holds a thousand
/// client connections): a wait costs what the ready sockets cost, not what the registered ones do.
///
/// Why not ``ZMQPoller``: it hands every registered descriptor to one `poll(2)` per wait and
/// scans them all afterwards, which is right for a node's handful of sockets, and with a
/// thousand sockets cost the bench's clients process more CPU per action than the authority it
/// measured. This one keeps the sockets' `ZMQ_FD` descriptors in an `epoll` set, level-triggered,
/// and asks a socket's `ZMQ_EVENTS` only when its descriptor signalled or the socket is a
/// suspect.
///
/// The rule it relies on is libzmq's for `ZMQ_FD` (see ``ZMQPoller``): any call on a socket may
/// process its pending commands and so clear the descriptor while a message waits. A socket is
/// therefore a suspect, asked again before the next wait, when it was just registered or
/// reported readable (its owner is about to use it); one used otherwise (a send on a socket the
/// last wait did not report) must be named with ``noteUsed(_:)``.
///
/// Threads: like its sockets, it belongs to one thread (it is not `Sendable`).
package final class ZMQManySocketPoller {
    private let epoll: Int32
    /// Registered sockets and the handle each had when registered, by index.
    private var sockets: [(socket: ZMQSocket, handle: UnsafeMutableRawPointer)] = []
    /// Sockets to ask before the next wait.
    private var suspects = NotedIndices()
    /// The sockets the current wait found readable.
    private var ready = NotedIndices()
    /// Reused by every wait.
    private var events: [epoll_event]

    /// Creates an empty poller.
    ///
    /// - Parameter batch: how many signalled descriptors one wait takes from the kernel at most.
    /// - Throws: ``ZMQError`` with the `epoll_create1` errno (`EMFILE`, `ENOMEM`).
    package init(batch: Int = 256) throws(ZMQError) {
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { throw ZMQError(code: errno, function: "epoll_create1") }
        self.epoll = epoll
        events = Array(repeating: epoll_event(), count: max(batch, 1))
    }

    deinit { Glibc.close(epoll) }

    /// The number of registered sockets.
    package var count: Int { sockets.count }

    /// Adds a socket, to be reported when readable; returns its index.
    ///
    /// - Throws: ``ZMQError``: `ENOTSOCK` if the socket is closed, or the `epoll_ctl` errno.
    @discardableResult
    package func register(_ socket: ZMQSocket) throws(ZMQError) -> Int {
        let handle = try socket.openHandle("zmq_getsockopt")
        let descriptor = try signalDescriptor(of: handle)
        let index = sockets.count
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = UInt64(index)
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, descriptor, &event) == 0 else { throw ZMQError(code: errno, function: "epoll_ctl") }
        sockets.append((socket, handle))
        suspects.grow()
        ready.grow()
        noteUsed(index)
        return index
    }

    /// Has socket `index` asked before the next wait: call it after using a socket that the last
    /// wait did not report readable (a send, a receive).
    package func noteUsed(_ index: Int) {
        suspects.note(index)
    }

    /// Waits until at least one socket is readable or `timeout` milliseconds pass, and returns
    /// the readable sockets' indices (empty on timeout), each once. Each of them is asked again
    /// before the next wait.
    ///
    /// - Parameter timeout: milliseconds; 0 checks without waiting, -1 waits indefinitely. A
    ///   wait woken by something other than a message (a peer connecting, which libzmq also
    ///   signals on the descriptor) or interrupted (`EINTR`) returns what it found, possibly
    ///   nothing: callers wait again until their own deadline.
    /// - Throws: ``ZMQError``: `ENOTSOCK` if a registered socket was closed, `ETERM` if its
    ///   context was terminated, or the `epoll_wait` errno.
    package func readable(timeout: Int) throws(ZMQError) -> [Int] {
        _ = ready.takeAll()
        for index in suspects.takeAll() { try check(index) }
        // Ready suspects are not waited for, but the signalled descriptors are still taken, so
        // a socket that is never drained cannot starve the others.
        let wait = ready.order.isEmpty ? Int32(clamping: timeout) : 0
        let signalled = events.withUnsafeMutableBufferPointer { buffer in
            epoll_wait(epoll, buffer.baseAddress, Int32(buffer.count), wait)
        }
        if signalled < 0 && errno != EINTR { throw ZMQError(code: errno, function: "epoll_wait") }
        for slot in 0..<Int(max(signalled, 0)) {
            let index = Int(events[slot].data.u64)
            if !ready.contains(index) { try check(index) }
        }
        for index in ready.order { noteUsed(index) }
        return ready.order
    }

    /// Asks socket `index`'s `ZMQ_EVENTS` (which processes its commands and clears its
    /// descriptor); notes it in `ready` when a message waits.
    private func check(_ index: Int) throws(ZMQError) {
        let entry = sockets[index]
        guard entry.socket.handle == entry.handle else { throw ZMQError(code: ENOTSOCK, function: "zmq_getsockopt") }
        if try pendingEvents(of: entry.handle, function: "zmq_getsockopt") & Int32(ZMQ_POLLIN) != 0 { ready.note(index) }
    }

    /// Socket indices in the order they were noted, each once.
    private struct NotedIndices {
        private(set) var order: [Int] = []
        private var isNoted: [Bool] = []

        /// Makes room for one more registered socket.
        mutating func grow() { isNoted.append(false) }

        mutating func note(_ index: Int) {
            guard !isNoted[index] else { return }
            isNoted[index] = true
            order.append(index)
        }

        func contains(_ index: Int) -> Bool { isNoted[index] }

        /// Returns the noted indices and forgets them.
        mutating func takeAll() -> [Int] {
            let taken = order
            for index in taken { isNoted[index] = false }
            order.removeAll(keepingCapacity: true)
            return taken
        }
    }
}
#endif
