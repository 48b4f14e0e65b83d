import ReactorCore
import ReactorWire

/// The dispatcher's jobs waiting for a worker: one first-in, first-out queue per effect kind,
/// with a global order across kinds.
///
/// Every operation is O(kinds waiting) (amortised), whatever the backlog: the dispatcher looks
/// at the head of each kind's queue only, never at every waiting job. Jobs handed back (a
/// worker died, said bye or re-registered) go to the front, ahead of everything that waits; jobs
/// taken from a slow worker go to the back.
///
/// The kinds' queues are found by comparing kinds, not by hashing them: placing a job already
/// looks at every kind's first job, an app has a handful of kinds, and hashing the kind twice
/// per job (queued, then taken) was about 1% of a busy authority's time.
struct JobQueue: Sendable {
    /// One waiting job.
    struct Pending: Sendable, Equatable {
        var job: JobID
        var kind: String
        /// A worker to give the job to only if no other can take it.
        var avoid: PeerID?
        /// The job's place in the global order (smaller goes first).
        fileprivate(set) var order: Int64 = 0

        init(job: JobID, kind: String, avoid: PeerID?) {
            self.job = job
            self.kind = kind
            self.avoid = avoid
        }
    }

    /// A waiting job as its kind's queue keeps it: plain values only, so that moving it in and
    /// out of the queue and reading a kind's first job retain nothing. Its kind is the queue's;
    /// a worker to avoid (only a job taken from a slow or dead worker has one) is in
    /// ``avoided``.
    private struct Waiting: Sendable {
        var job: JobID
        var order: Int64
        var avoids: Bool
    }

    /// The waiting jobs of one kind, oldest first.
    private struct KindQueue: Sendable {
        let kind: String
        var jobs: Deque<Waiting>
    }

    /// One queue per kind with jobs waiting (a kind's queue goes when its last job does).
    private var kinds: [KindQueue] = []
    /// The worker each waiting job that has one should be given to only as a last resort.
    private var avoided: [JobID: PeerID] = [:]
    private var nextBack: Int64 = 0
    private var nextFront: Int64 = -1

    /// Jobs waiting.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// Queues a job behind every waiting one.
    mutating func append(_ pending: Pending) {
        let waiting = hold(pending, order: nextBack)
        nextBack += 1
        kinds[index(creating: pending.kind)].jobs.append(waiting)
        count += 1
    }

    /// Queues a job ahead of every waiting one.
    mutating func prepend(_ pending: Pending) {
        let waiting = hold(pending, order: nextFront)
        nextFront -= 1
        kinds[index(creating: pending.kind)].jobs.prepend(waiting)
        count += 1
    }

    /// Queues `jobs` ahead of every waiting one, keeping their order.
    mutating func prepend(contentsOf jobs: [Pending]) {
        for pending in jobs.reversed() { prepend(pending) }
    }

    /// Removes and returns the first job in the global order that `place` finds a place for,
    /// with that place. `place` is asked about the first job of each kind only: jobs of one kind
    /// wait in line. One walk of the kinds; the kind's queue is taken by its position.
    mutating func popFirst<Choice>(placedBy place: (Pending) -> Choice?) -> (pending: Pending, choice: Choice)? {
        var best: (index: Int, order: Int64, choice: Choice)?
        for index in kinds.indices {
            guard let head = kinds[index].jobs.first else { continue }
            if let best, best.order < head.order { continue }
            if let choice = place(pending(head, kind: kinds[index].kind)) { best = (index, head.order, choice) }
        }
        guard let best, let head = kinds[best.index].jobs.popFirst() else { return nil }
        let pending = pending(head, kind: kinds[best.index].kind)
        if head.avoids { avoided[head.job] = nil }
        if kinds[best.index].jobs.isEmpty { kinds.remove(at: best.index) }
        count -= 1
        return (pending, best.choice)
    }

    /// Removes a waiting job (a cancelled one); whether it was waiting. O(jobs waiting).
    mutating func remove(_ job: JobID) -> Bool {
        guard let index = kinds.firstIndex(where: { $0.jobs.elements.contains { $0.job == job } }) else { return false }
        let kept = kinds[index].jobs.removeAll().filter { $0.job != job }
        for waiting in kept { kinds[index].jobs.append(waiting) }
        if kinds[index].jobs.isEmpty { kinds.remove(at: index) }
        avoided[job] = nil
        count -= 1
        return true
    }

    /// Every waiting job in the global order (for tests and diagnostics).
    var all: [Pending] {
        kinds.flatMap { queue in queue.jobs.elements.map { pending($0, kind: queue.kind) } }.sorted { $0.order < $1.order }
    }

    /// The place of `kind`'s queue, made (empty, last) if it has none.
    private mutating func index(creating kind: String) -> Int {
        if let index = kinds.firstIndex(where: { $0.kind == kind }) { return index }
        kinds.append(KindQueue(kind: kind, jobs: Deque()))
        return kinds.count - 1
    }

    /// `pending` as its kind's queue keeps it, at `order`.
    private mutating func hold(_ pending: Pending, order: Int64) -> Waiting {
        if let avoid = pending.avoid { avoided[pending.job] = avoid }
        return Waiting(job: pending.job, order: order, avoids: pending.avoid != nil)
    }

    /// A waiting job of `kind` as callers see it (its worker to avoid looked up only if it has one).
    private func pending(_ waiting: Waiting, kind: String) -> Pending {
        var pending = Pending(job: waiting.job, kind: kind, avoid: waiting.avoids ? avoided[waiting.job] : nil)
        pending.order = waiting.order
        return pending
    }
}
