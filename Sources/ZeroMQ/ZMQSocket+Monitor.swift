import CZMQ

/// Socket events that libzmq's monitor reports (a subset: the ones nodes act on or log).
package struct ZMQMonitorEvents: OptionSet, Sendable, Hashable {
    package let rawValue: Int32
    package init(rawValue: Int32) { self.rawValue = rawValue }

    package static let connected = ZMQMonitorEvents(rawValue: ZMQ_EVENT_CONNECTED)
    package static let accepted = ZMQMonitorEvents(rawValue: ZMQ_EVENT_ACCEPTED)
    package static let disconnected = ZMQMonitorEvents(rawValue: ZMQ_EVENT_DISCONNECTED)
    /// A connection attempt failed (nothing listens at the endpoint, or it refused) and is
    /// retried after the reconnect interval.
    package static let connectRetried = ZMQMonitorEvents(rawValue: ZMQ_EVENT_CONNECT_RETRIED)
    /// The peer spoke another security mechanism or a broken handshake (no keys, wrong keys).
    package static let handshakeFailedProtocol = ZMQMonitorEvents(rawValue: ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
    /// The ZAP handler refused the peer.
    package static let handshakeFailedAuth = ZMQMonitorEvents(rawValue: ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
    /// The handshake failed for another reason (for CURVE: a box that did not decrypt).
    package static let handshakeFailedNoDetail = ZMQMonitorEvents(rawValue: ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
    package static let handshakeSucceeded = ZMQMonitorEvents(rawValue: ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
    /// Every handshake failure.
    package static let handshakeFailures: ZMQMonitorEvents = [.handshakeFailedProtocol, .handshakeFailedAuth, .handshakeFailedNoDetail]
}

/// One event read from a monitor socket.
package struct ZMQMonitorEvent: Sendable, Hashable {
    /// What happened (exactly one flag).
    package var event: ZMQMonitorEvents
    /// The event's value (an errno for failures, a file descriptor for connects).
    package var value: UInt32
    /// The peer or local endpoint the event concerns.
    package var endpoint: String
}

extension ZMQSocket {
    /// Starts reporting `events` of this socket to a new PAIR socket, which is returned.
    ///
    /// The returned socket belongs to the same thread as this one; poll it and read events with
    /// ``readMonitorEvent()``. Close it before this socket.
    /// - Parameter name: unique inproc name for the monitor channel.
    package func monitor(_ events: ZMQMonitorEvents, name: String) throws(ZMQError) -> ZMQSocket {
        let handle = try openHandle("zmq_socket_monitor")
        let endpoint = "inproc://" + name
        try zmqCall("zmq_socket_monitor") { zmq_socket_monitor(handle, endpoint, events.rawValue) }
        let pair = try ZMQSocket(context: context, type: .pair)
        try pair.connect(endpoint)
        return pair
    }

    /// Stops the monitor ``monitor(_:name:)`` started on this socket. Call it before closing the
    /// monitor's reading socket: libzmq sends events to the monitor with a blocking send, often
    /// from its I/O thread, so an event for a reader that is gone would block that thread and
    /// with it every socket of the context.
    package func stopMonitor() {
        guard let handle = try? openHandle("zmq_socket_monitor") else { return }
        _ = zmq_socket_monitor(handle, nil, 0)
    }

    /// Reads one event from a monitor socket made by ``monitor(_:name:)``, or `nil` when none
    /// is waiting.
    package func readMonitorEvent() throws(ZMQError) -> ZMQMonitorEvent? {
        guard let frames = try tryReceiveMultipart() else { return nil }
        guard frames.count >= 2, frames[0].count >= 6 else { return nil }
        let header = frames[0]
        let event = Int32(header[0]) | Int32(header[1]) << 8
        let value = UInt32(header[2]) | UInt32(header[3]) << 8 | UInt32(header[4]) << 16 | UInt32(header[5]) << 24
        return ZMQMonitorEvent(event: ZMQMonitorEvents(rawValue: event), value: value, endpoint: String(decoding: frames[1], as: UTF8.self))
    }
}
