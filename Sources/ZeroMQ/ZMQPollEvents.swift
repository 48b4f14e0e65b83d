import CZMQ

/// Readiness conditions a ``ZMQPoller`` waits for and reports.
package struct ZMQPollEvents: OptionSet, Sendable, Hashable {
    /// The raw `ZMQ_POLL*` bits.
    package let rawValue: Int16

    /// Creates a set from `ZMQ_POLL*` bits.
    package init(rawValue: Int16) {
        self.rawValue = rawValue
    }

    /// At least one message (or, for a file descriptor, data) can be read without blocking (`ZMQ_POLLIN`).
    package static let readable = ZMQPollEvents(rawValue: Int16(ZMQ_POLLIN))
    /// At least one message can be sent without blocking (`ZMQ_POLLOUT`).
    package static let writable = ZMQPollEvents(rawValue: Int16(ZMQ_POLLOUT))
    /// An error condition on a file descriptor (`ZMQ_POLLERR`); never reported for sockets.
    package static let error = ZMQPollEvents(rawValue: Int16(ZMQ_POLLERR))
}
