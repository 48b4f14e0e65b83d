import Dispatch
import Glibc

/// SIGUSR1 for `authority`: promotes a standby (like `pg_ctl promote`); on a primary it only
/// logs. The signal is ignored from `init` on (its default action would end the process), and a
/// dispatch source delivers it to `handler` on a background queue.
final class PromoteSignal {
    private let source: any DispatchSourceSignal

    init(handler: @escaping @Sendable () -> Void) {
        signal(SIGUSR1, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: DispatchQueue(label: "promote-signal"))
        source.setEventHandler(handler: handler)
        source.resume()
    }

    deinit { source.cancel() }
}
