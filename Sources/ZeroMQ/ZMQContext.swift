import CZMQ
import Dispatch
import Foundation
import Synchronization

/// A libzmq context: the owner of I/O threads that every ``ZMQSocket`` is created from.
///
/// Threads: a context may be shared freely between threads and tasks. libzmq documents
/// contexts as thread-safe ("the only thread-safe ZeroMQ object"), and every state change on
/// this wrapper happens under a `Mutex`, so the class is genuinely `Sendable`.
///
/// Lifetime: each socket keeps its context alive. Shutting a context down never hangs:
/// - ``shutdown()`` makes every blocking call on its sockets return `ETERM` and refuses new sockets;
/// - ``terminate(timeout:)`` runs `zmq_ctx_term` on a helper thread and waits at most `timeout`;
/// - `deinit` never calls `zmq_ctx_term` on the calling thread. Because sockets retain their
///   context, no socket is open by then; termination still runs on a detached helper thread so
///   that even a socket lingering with unsent messages cannot block the releasing thread.
public final class ZMQContext: Sendable {
    private enum Phase {
        case open, shutDown, terminating, terminated
    }

    private struct State {
        var handle: UnsafeMutableRawPointer?
        var phase: Phase
    }

    private let state: Mutex<State>
    /// Entered when termination starts, left when `zmq_ctx_term` has returned.
    private let termination = DispatchGroup()

    /// Creates a context with the given number of I/O threads.
    ///
    /// - Throws: ``ZMQError`` from `zmq_ctx_new` or `zmq_ctx_set` (`EINVAL` for a negative count).
    public init(ioThreads: Int = 1) throws(ZMQError) {
        guard let handle = zmq_ctx_new() else {
            throw ZMQError(code: zmq_errno(), function: "zmq_ctx_new")
        }
        guard let threads = Int32(exactly: ioThreads), threads >= 0,
              zmq_ctx_set(handle, ZMQ_IO_THREADS, threads) == 0
        else {
            zmq_ctx_term(handle)
            throw ZMQError(code: EINVAL, function: "zmq_ctx_set")
        }
        state = Mutex(State(handle: handle, phase: .open))
    }

    deinit {
        let handle = state.withLock { state -> ContextHandle? in
            guard state.phase == .open || state.phase == .shutDown, let raw = state.handle else { return nil }
            state.phase = .terminating
            return ContextHandle(raw: raw)
        }
        if let handle {
            Thread.detachNewThread { handle.terminate() }
        }
    }

    /// Whether ``shutdown()`` or ``terminate(timeout:)`` has been called.
    public var isShutDown: Bool {
        state.withLock { $0.phase != .open }
    }

    /// Whether `zmq_ctx_term` has completed; the context can no longer be used at all.
    public var isTerminated: Bool {
        state.withLock { $0.phase == .terminated }
    }

    /// Makes all blocking operations on this context's sockets fail with `ETERM` (`zmq_ctx_shutdown`).
    ///
    /// Never blocks. New sockets are refused afterwards; existing sockets must still be closed
    /// by their owners before ``terminate(timeout:)`` can complete. Calling it again is a no-op.
    public func shutdown() {
        state.withLock { state in
            guard state.phase == .open, let handle = state.handle else { return }
            zmq_ctx_shutdown(handle)
            state.phase = .shutDown
        }
    }

    /// Terminates the context with `zmq_ctx_term` on a helper thread, waiting at most `timeout`.
    ///
    /// `zmq_ctx_term` first makes blocking calls elsewhere return `ETERM`, then waits until every
    /// socket of the context is closed and has flushed within its linger period. Running it on a
    /// helper thread means the caller is never held longer than `timeout`, even when a socket is
    /// still open somewhere. Safe to call from any thread, any number of times.
    ///
    /// - Returns: `true` if termination finished within `timeout`; `false` if it is still waiting
    ///   for sockets to close (it then completes in the background as soon as they are closed).
    @discardableResult
    public func terminate(timeout: Duration) -> Bool {
        let handle = state.withLock { state -> ContextHandle? in
            guard state.phase == .open || state.phase == .shutDown, let raw = state.handle else { return nil }
            state.phase = .terminating
            termination.enter()
            return ContextHandle(raw: raw)
        }
        if let handle {
            Thread.detachNewThread { [self] in
                handle.terminate()
                state.withLock { state in
                    state.phase = .terminated
                    state.handle = nil
                }
                termination.leave()
            }
        }
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = max(0, seconds) &* 1_000_000_000 &+ max(0, attoseconds / 1_000_000_000)
        return termination.wait(timeout: .now() + .nanoseconds(Int(clamping: nanoseconds))) == .success
    }

    /// Creates a raw libzmq socket under the state lock, so termination cannot free the context meanwhile.
    func makeRawSocket(_ type: ZMQSocketType) throws(ZMQError) -> UnsafeMutableRawPointer {
        let result: Result<UnsafeMutableRawPointer, ZMQError> = state.withLock { state in
            guard state.phase == .open, let handle = state.handle else {
                return .failure(ZMQError(code: ETERM, function: "zmq_socket"))
            }
            guard let socket = zmq_socket(handle, type.rawValue) else {
                return .failure(ZMQError(code: zmq_errno(), function: "zmq_socket"))
            }
            return .success(socket)
        }
        return try result.get()
    }
}

/// A context pointer handed to the helper thread that runs `zmq_ctx_term`.
///
/// `@unchecked Sendable` is sound: libzmq contexts are thread-safe (zmq_ctx_new(3): "A ØMQ
/// context is thread safe and may be shared among as many application threads as necessary"),
/// and the pointer is used by exactly one helper thread after the owner marked it terminating.
private struct ContextHandle: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer

    /// Runs `zmq_ctx_term`, restarting it when interrupted by a signal as libzmq requires.
    func terminate() {
        _ = try? zmqCall("zmq_ctx_term") { zmq_ctx_term(raw) }
    }
}
