#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization

/// The write end of the pipe the signal handler writes to. Set once, before the first
/// `sigaction` that installs ``signalHandler``, and never changed: the handler only reads it, and
/// the `sigaction` call orders the store before any delivery that runs the handler.
nonisolated(unsafe) private var signalPipeWrite: Int32 = -1

/// Async-signal-safe: one `write(2)` of the signal number to the pipe, nothing else.
private let signalHandler: @convention(c) (Int32) -> Void = { number in
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(signalPipeWrite, &byte, 1)
}

/// SIGINT/SIGTERM handling for long-running commands: the first signal asks for a graceful stop
/// (`onFirst`, on a background thread), a second one exits at once with 128 + the signal.
///
/// The handlers are installed with `sigaction` before `init` returns, so a signal sent at any
/// moment after that is seen (a signal source registered asynchronously can miss one that comes
/// right away). The handler only writes the signal's number to a pipe; a reader thread does the
/// rest. One trap is active at a time; releasing it makes later signals do nothing (they stay
/// caught, as a supervisor's second signal must not kill a process that is cleaning up).
package final class SignalTrap: Sendable {
    private struct Shared: Sendable {
        var count = 0
        var onFirst: (@Sendable (Int32) -> Void)?
    }

    /// The trap that signals currently go to (one per process).
    private static let current = Mutex<Shared>(Shared())
    private static let installed = Mutex(false)

    /// Installs the handlers; `onFirst` runs once, on the trap's reader thread.
    package init(onFirst: @escaping @Sendable (Int32) -> Void) {
        Self.current.withLock { $0 = Shared(count: 0, onFirst: onFirst) }
        Self.installOnce()
    }

    /// Whether a signal has arrived since this trap was installed.
    package var fired: Bool { Self.current.withLock { $0.count > 0 } }

    deinit {
        Self.current.withLock { $0.onFirst = nil }
    }

    private static func installOnce() {
        installed.withLock { done in
            guard !done else { return }
            done = true
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else { return }
            signalPipeWrite = fds[1]
            _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
            let reader = fds[0]
            DispatchQueue(label: "signals").async { readSignals(from: reader) }
            for number in [SIGINT, SIGTERM] {
                var action = sigaction()
                #if canImport(Glibc)
                action.__sigaction_handler.sa_handler = signalHandler
                #else
                action.__sigaction_u.__sa_handler = signalHandler
                #endif
                sigemptyset(&action.sa_mask)
                action.sa_flags = SA_RESTART
                _ = sigaction(number, &action, nil)
            }
        }
    }

    /// The reader thread: one byte per signal, for the life of the process.
    private static func readSignals(from descriptor: Int32) {
        var byte: UInt8 = 0
        while true {
            guard case .success(let bytes) = retryingInterrupts("read", { read(descriptor, &byte, 1) }), bytes == 1 else { return }
            let number = Int32(byte)
            let (count, action) = current.withLock { shared -> (Int, (@Sendable (Int32) -> Void)?) in
                guard shared.onFirst != nil else { return (0, nil) }
                shared.count += 1
                return (shared.count, shared.onFirst)
            }
            if count == 1 {
                action?(number)
            } else if count > 1 {
                // A second signal: the user wants out now.
                _exit(128 + number)
            }
        }
    }
}
