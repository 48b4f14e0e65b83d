import Dispatch
import Glibc
import Synchronization

/// SIGINT/SIGTERM handling shared by every long-running command: the first signal asks for a
/// graceful stop, a second one exits at once. Keep the trap alive as long as it should act.
final class SignalTrap {
    private final class Count: Sendable {
        let value = Atomic<Int>(0)
    }

    private let sources: [any DispatchSourceSignal]
    private let count = Count()

    /// Installs the handlers; `onFirst` runs once, on a background queue.
    init(onFirst: @escaping @Sendable (Int32) -> Void) {
        let queue = DispatchQueue(label: "signals")
        let count = self.count
        sources = [SIGINT, SIGTERM].map { signalNumber in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.setEventHandler {
                if count.value.add(1, ordering: .relaxed).newValue == 1 {
                    onFirst(signalNumber)
                } else {
                    // A second signal: the user wants out now.
                    _exit(128 + signalNumber)
                }
            }
            source.resume()
            return source
        }
    }

    /// Whether a signal has arrived.
    var fired: Bool { count.value.load(ordering: .relaxed) > 0 }

    deinit {
        for source in sources { source.cancel() }
    }
}
