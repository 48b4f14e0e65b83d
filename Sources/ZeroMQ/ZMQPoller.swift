import CZMQ

/// Waits until any of several sockets and file descriptors is ready (`zmq_poll`).
///
/// Register sockets, raw file descriptors or ``Mailbox``es once; each registration returns an
/// index. The poll item array is built at registration and reused by every ``poll(timeout:)``,
/// so polling allocates nothing. After a poll, ``events(at:)`` reports what each item saw.
///
/// Threads: like its sockets, a poller belongs to one loop thread (it is not `Sendable`).
/// The poller keeps registered sockets and mailboxes alive; polling a socket that was closed
/// meanwhile fails with `ENOTSOCK` instead of touching the freed libzmq pointer.
package final class ZMQPoller {
    private var items: [zmq_pollitem_t] = []
    /// Registered sockets and the handle each had when registered, by item index.
    private var sockets: [(socket: ZMQSocket, handle: UnsafeMutableRawPointer)?] = []
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
        items.append(zmq_pollitem_t(socket: handle, fd: 0, events: events.rawValue, revents: 0))
        sockets.append((socket, handle))
        return items.count - 1
    }

    /// Adds a raw file descriptor (a pipe, eventfd, TCP socket …); returns its item index.
    ///
    /// The caller keeps the descriptor open for as long as the poller is used.
    @discardableResult
    package func register(fileDescriptor: Int32, for events: ZMQPollEvents = .readable) -> Int {
        items.append(zmq_pollitem_t(socket: nil, fd: fileDescriptor, events: events.rawValue, revents: 0))
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
        for entry in sockets {
            if let entry, entry.socket.handle != entry.handle {
                throw ZMQError(code: ENOTSOCK, function: "zmq_poll")
            }
        }
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(max(timeout, 0))
        var remaining = timeout
        var ranBefore = false
        let ready = try zmqCall("zmq_poll") {
            // zmqCall runs this again after EINTR: wait only for what is left of the timeout.
            if ranBefore && timeout > 0 {
                let left = clock.now.duration(to: deadline).components
                remaining = max(0, Int(left.seconds) * 1000 + Int(left.attoseconds / 1_000_000_000_000_000))
            }
            ranBefore = true
            return items.withUnsafeMutableBufferPointer { buffer in
                zmq_poll(buffer.baseAddress, Int32(buffer.count), remaining)
            }
        }
        return Int(ready)
    }

    /// What item `index` reported in the last ``poll(timeout:)``.
    package func events(at index: Int) -> ZMQPollEvents {
        ZMQPollEvents(rawValue: items[index].revents)
    }

    /// Whether item `index` was readable in the last ``poll(timeout:)``.
    package func isReadable(_ index: Int) -> Bool {
        events(at: index).contains(.readable)
    }
}
