import Synchronization

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
package final class Mailbox<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var signalled = false
    }

    private let state = Mutex(State())
    /// The descriptor to poll for readability.
    package let fileDescriptor: Int32
    private let writeDescriptor: Int32

    /// Creates an empty mailbox and its wake-up descriptor.
    ///
    /// - Throws: ``ZMQError`` carrying the errno of `pipe` (e.g. `EMFILE`) when descriptors run out.
    package init() throws(ZMQError) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw ZMQError(code: errno, function: "pipe") }
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
    package func post(_ element: Element) {
        let mustSignal = state.withLock { state in
            state.items.append(element)
            guard !state.signalled else { return false }
            state.signalled = true
            return true
        }
        if mustSignal { signal() }
    }

    /// Removes and returns everything posted so far, in posting order; empty if nothing was posted.
    ///
    /// Meant for the loop thread after the poller reports ``fileDescriptor`` readable; it also
    /// resets the descriptor. Safe to call from any thread.
    package func drain() -> [Element] {
        // Clear the descriptor before taking the items: a post racing with us either lands in
        // this batch or signals again afterwards, so the loop never sleeps on a pending item.
        clearSignal()
        return state.withLock { state in
            state.signalled = false
            let items = state.items
            state.items.removeAll(keepingCapacity: true)
            return items
        }
    }

    /// The number of elements waiting to be drained.
    package var pendingCount: Int {
        state.withLock { $0.items.count }
    }

    private func signal() {
        var byte: UInt8 = 1
        while write(writeDescriptor, &byte, 1) < 0 && errno == EINTR {}
    }

    private func clearSignal() {
        var buffer: (UInt64, UInt64) = (0, 0)
        while true {
            let count = read(fileDescriptor, &buffer, MemoryLayout.size(ofValue: buffer))
            if count > 0 || (count < 0 && errno == EINTR) { continue }
            return
        }
    }
}
