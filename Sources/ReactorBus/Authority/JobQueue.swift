import ReactorCore

/// The dispatcher's jobs waiting for a worker: one first-in, first-out queue per effect kind,
/// with a global order across kinds.
///
/// Every operation is O(1) (amortised), whatever the backlog: the dispatcher looks at the head
/// of each kind's queue only, never at every waiting job. Jobs handed back (a worker died,
/// said bye or re-registered) go to the front, ahead of everything that waits; jobs taken from a
/// slow worker go to the back.
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

    private var kinds: [String: Deque<Pending>] = [:]
    private var nextBack: Int64 = 0
    private var nextFront: Int64 = -1

    /// Jobs waiting.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// Queues a job behind every waiting one.
    mutating func append(_ pending: Pending) {
        var pending = pending
        pending.order = nextBack
        nextBack += 1
        kinds[pending.kind, default: Deque()].append(pending)
        count += 1
    }

    /// Queues a job ahead of every waiting one.
    mutating func prepend(_ pending: Pending) {
        var pending = pending
        pending.order = nextFront
        nextFront -= 1
        kinds[pending.kind, default: Deque()].prepend(pending)
        count += 1
    }

    /// Queues `jobs` ahead of every waiting one, keeping their order.
    mutating func prepend(contentsOf jobs: [Pending]) {
        for pending in jobs.reversed() { prepend(pending) }
    }

    /// The first job in the global order that `place` finds a place for, with that place.
    /// `place` is asked about the first job of each kind only: jobs of one kind wait in line.
    func first<Choice>(placedBy place: (Pending) -> Choice?) -> (pending: Pending, choice: Choice)? {
        var best: (pending: Pending, choice: Choice)?
        for queue in kinds.values {
            guard let head = queue.first else { continue }
            if let best, best.pending.order < head.order { continue }
            if let choice = place(head) { best = (head, choice) }
        }
        return best
    }

    /// Removes the first job of `kind`.
    @discardableResult
    mutating func popFirst(ofKind kind: String) -> Pending? {
        guard let pending = kinds[kind]?.popFirst() else { return nil }
        if kinds[kind]?.isEmpty == true { kinds[kind] = nil }
        count -= 1
        return pending
    }

    /// Every waiting job in the global order (for tests and diagnostics).
    var all: [Pending] {
        kinds.values.flatMap { $0.elements }.sorted { $0.order < $1.order }
    }
}

/// A double-ended queue on a growable ring buffer: O(1) append, prepend and removal at the front.
struct Deque<Element>: Sendable where Element: Sendable {
    private var storage: [Element?] = []
    private var head = 0
    private(set) var count = 0

    init() {}

    var isEmpty: Bool { count == 0 }

    var first: Element? { isEmpty ? nil : storage[head] }

    /// The elements from first to last.
    var elements: [Element] { (0..<count).map { storage[(head + $0) % storage.count]! } }

    mutating func append(_ element: Element) {
        growIfFull()
        storage[(head + count) % storage.count] = element
        count += 1
    }

    mutating func prepend(_ element: Element) {
        growIfFull()
        head = (head - 1 + storage.count) % storage.count
        storage[head] = element
        count += 1
    }

    mutating func popFirst() -> Element? {
        guard !isEmpty else { return nil }
        let element = storage[head]
        storage[head] = nil
        head = (head + 1) % storage.count
        count -= 1
        if count == 0 { head = 0 }
        return element
    }

    private mutating func growIfFull() {
        guard count == storage.count else { return }
        var grown = [Element?](repeating: nil, count: max(8, storage.count * 2))
        for offset in 0..<count { grown[offset] = storage[(head + offset) % storage.count] }
        storage = grown
        head = 0
    }
}
