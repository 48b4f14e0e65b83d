import Synchronization

/// Set once by a signal handler, read by the loop it stops.
final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)

    func set() { flag.store(true, ordering: .releasing) }

    var isSet: Bool { flag.load(ordering: .acquiring) }
}
