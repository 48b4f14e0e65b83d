import Synchronization
import SystemCalls

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A thread-safe queue into one loop thread, with a file descriptor a ``ZMQPoller`` can wait on.
///
/// Any thread or task may ``post(_:)``; the loop that owns the sockets registers the mailbox
/// with its poller and calls ``drain()`` when it is readable. Elements from one producer come
/// out in the order that producer posted them; producers are interleaved in lock order.
///
/// Wake-up: a non-blocking, close-on-exec pipe. One byte is written when the queue goes from
/// "nothing signalled" to "something to drain", so a burst of posts costs one `write` (and the
/// pipe can never fill up); the read end stays readable until ``drain()`` empties it. A spurious wake-up (a drain
/// that returns nothing) is possible and harmless; a lost wake-up is not.
@usableFromInline
package final class Mailbox<Element: Sendable>: Sendable {
    // `post` and `drain` are inlinable so that a node's loop specialises them for its element
    // type: unspecialised, every post looked up the metadata of `Mutex<State>` at run time.
    // The class itself is `@usableFromInline` for that: the compiler keeps the bodies of a
    // `package` type's inlinable members out of the module's interface otherwise, and every
    // caller ran the generic code (seen in profiles and in the optimiser's remarks).
    @usableFromInline
    struct State {
        @usableFromInline var items: [Element] = []
        @usableFromInline var signalled = false
        @usableFromInline var isClosed = false

        @inlinable init() {}
    }

    @usableFromInline let state = Mutex(State())
    /// The descriptor to poll for readability.
    package let fileDescriptor: Int32
    @usableFromInline let writeDescriptor: Int32

    /// Creates an empty mailbox and its wake-up descriptor.
    ///
    /// - Throws: `SystemCallError` carrying the errno of `pipe` (e.g. `EMFILE`) when descriptors
    ///   run out: a mailbox is a pipe, not a libzmq object.
    package init() throws(SystemCallError) {
        var fds: [Int32] = [0, 0]
        if case .failure(let error) = retryingInterrupts("pipe", { pipe(&fds) }) { throw error }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        fileDescriptor = fds[0]
        writeDescriptor = fds[1]
    }

    deinit {
        close(fileDescriptor)
        close(writeDescriptor)
    }

    /// Appends an element and wakes the loop if it is not already signalled. Safe from any thread.
    ///
    /// - Returns: false, and the element is not kept, once the mailbox is closed (see ``closeForPosting()``).
    @inlinable @discardableResult
    package func post(_ element: Element) -> Bool {
        let outcome: (accepted: Bool, mustSignal: Bool) = state.withLock { state in
            guard !state.isClosed else { return (false, false) }
            state.items.append(element)
            guard !state.signalled else { return (true, false) }
            state.signalled = true
            return (true, true)
        }
        if outcome.mustSignal { signal() }
        return outcome.accepted
    }

    /// Runs `body`, during which posts (from any thread) append without waking the loop, then
    /// removes and returns everything posted so far, in posting order.
    ///
    /// For a loop that runs code which posts here itself: those posts cost no `write`, and the
    /// drain no `read`, unless a post from before `body` already woke the descriptor (or
    /// `clearing`, the poller found it readable). If `body` throws, nothing is drained, and
    /// what was posted wakes the loop as usual. Call it on the loop thread only.
    @inlinable
    package func drain<Failure: Error>(afterRunning body: () throws(Failure) -> Void, clearing: Bool = false) throws(Failure) -> [Element] {
        var items: [Element] = []
        try drain(into: &items, afterRunning: body, clearing: clearing)
        return items
    }

    /// ``drain(afterRunning:clearing:)`` into `buffer`, as ``drain(into:)`` does; if `body`
    /// throws, `buffer` is left empty.
    @inlinable
    package func drain<Failure: Error>(into buffer: inout [Element], afterRunning body: () throws(Failure) -> Void,
                                       clearing: Bool = false) throws(Failure) {
        buffer.removeAll(keepingCapacity: true)
        let wasSignalled = state.withLock { state in
            let was = state.signalled
            state.signalled = true
            return was
        }
        do {
            try body()
        } catch {
            let mustSignal = state.withLock { state in
                // A post from before `body` has woken (or is waking) the descriptor already.
                guard !wasSignalled else { return false }
                guard !state.items.isEmpty else {
                    state.signalled = false
                    return false
                }
                return true
            }
            if mustSignal { signal() }
            throw error
        }
        if wasSignalled || clearing { clearSignal() }
        take(into: &buffer)
    }

    /// Closes the mailbox: returns what was posted and not drained, in posting order, and every
    /// later ``post(_:)`` is refused. For a consumer that stops reading but must not strand what
    /// producers still send (they hand it elsewhere when `post` returns false). Safe from any thread.
    package func closeForPosting() -> [Element] {
        clearSignal()
        return state.withLock { state in
            state.isClosed = true
            state.signalled = false
            defer { state.items = [] }
            return state.items
        }
    }

    /// Removes and returns everything posted so far, in posting order; empty if nothing was posted.
    ///
    /// Meant for the loop thread after the poller reports ``fileDescriptor`` readable; it also
    /// resets the descriptor. Safe to call from any thread.
    @inlinable
    package func drain() -> [Element] {
        var items: [Element] = []
        drain(into: &items)
        return items
    }

    /// Replaces `buffer`'s contents with everything posted so far, in posting order, and resets
    /// the descriptor, as ``drain()`` does; the mailbox keeps `buffer`'s storage for the next
    /// posts. A loop that drains into the same array each time swaps two arrays back and forth,
    /// and allocates nothing once both have grown to its bursts (a drain that returned a new
    /// array left the mailbox to allocate one as large as the last for every burst after).
    @inlinable
    package func drain(into buffer: inout [Element]) {
        buffer.removeAll(keepingCapacity: true)
        // Clear the descriptor before taking the items: a post racing with us either lands in
        // this batch or signals again afterwards, so the loop never sleeps on a pending item.
        clearSignal()
        take(into: &buffer)
    }

    /// Swaps every element posted so far into `buffer`, which the caller emptied (its storage
    /// is kept for the next posts), and resets the signal; the caller clears the descriptor first.
    @inlinable
    func take(into buffer: inout [Element]) {
        state.withLock { state in
            state.signalled = false
            swap(&state.items, &buffer)
        }
    }

    /// The number of elements waiting to be drained.
    package var pendingCount: Int {
        state.withLock { $0.items.count }
    }

    @usableFromInline
    func signal() {
        var byte: UInt8 = 1
        _ = retryingInterrupts("write") { write(writeDescriptor, &byte, 1) }
    }

    @usableFromInline
    func clearSignal() {
        var buffer: (UInt64, UInt64) = (0, 0)
        let size = MemoryLayout.size(ofValue: buffer)
        while case .success(let count) = retryingInterrupts("read", { read(fileDescriptor, &buffer, size) }), count > 0 {}
    }
}
