import CZMQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs one libzmq call that reports failure as a negative return value and `errno`.
///
/// `EINTR` is retried (libzmq asks callers to restart interrupted calls); every other
/// failure becomes a ``ZMQError`` carrying `zmq_errno()` and `function`. This is the only
/// place that turns libzmq's errno into a Swift error.
@inline(__always)
@discardableResult
func zmqCall(_ function: StaticString, _ body: () -> Int32) throws(ZMQError) -> Int32 {
    while true {
        let rc = body()
        if rc >= 0 { return rc }
        let code = zmq_errno()
        if code == EINTR { continue }
        throw ZMQError(code: code, function: String(describing: function))
    }
}

/// Like ``zmqCall(_:_:)`` but reports `EAGAIN` as `nil` instead of throwing.
///
/// Non-blocking operations (`ZMQ_DONTWAIT`) and calls whose send/receive timeout expired
/// use this so that "nothing to do right now" is a value, not an error.
@inline(__always)
func zmqCallUnlessWouldBlock(_ function: StaticString, _ body: () -> Int32) throws(ZMQError) -> Int32? {
    while true {
        let rc = body()
        if rc >= 0 { return rc }
        let code = zmq_errno()
        if code == EINTR { continue }
        if code == EAGAIN { return nil }
        throw ZMQError(code: code, function: String(describing: function))
    }
}
