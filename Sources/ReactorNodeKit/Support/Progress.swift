import ReactorBus
import ZeroMQ

/// One progress line on stderr at most every two seconds, for tools that read long journals.
final class Progress {
    private let label: String
    private let total: UInt64?
    private var next = MonotonicClock.milliseconds() + 2_000

    /// Progress of `label` over `total` items, if known.
    init(label: String, total: UInt64?) {
        self.label = label
        self.total = total
    }

    /// `done` items so far; prints when two seconds have passed since the last line.
    func report(_ done: UInt64) {
        let now = MonotonicClock.milliseconds()
        guard now >= next else { return }
        next = now + 2_000
        Output.error("\(label): \(done)\(total.map { " of \($0)" } ?? "") record(s) read")
    }
}
