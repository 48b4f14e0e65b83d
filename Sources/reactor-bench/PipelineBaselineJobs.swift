/// Which baseline worker runs which job, for the async limit baseline
/// (``PipelineBaselineAuthority`` with a workers endpoint): the few rules of the real
/// `Dispatcher` that a benchmark run exercises, as a plain value, and nothing else.
///
/// - A worker is given at most its announced capacity, clamped to ``maxCapacity`` (the real
///   authority's `--max-worker-capacity` default), and a new job goes to the registered worker
///   with the fewest jobs that has room (as the real one picks); with no room anywhere it waits
///   in a FIFO queue until a `done` frees a slot.
/// - A job is its `action_seq` (the counter's `countUpAsync` has one effect, index 0). Its one
///   mutation is applied once: an `emit` of a job that is not open or not held by the sender is
///   foreign, a second `emit` is a duplicate; both are dropped.
/// - A worker that registers again (a new `ready` on the same connection) or says `bye` gives its
///   unreported jobs back to the front of the queue; a job whose mutation was applied keeps that,
///   so running it again never applies it twice. There are no heartbeats, timeouts or
///   quarantine: the baseline runs on loopback for one benchmark run.
struct PipelineBaselineJobs {
    /// The most jobs one worker is given at once, whatever it announces.
    static let maxCapacity = 256

    /// One job handed to one worker (by its routing identity).
    struct Assignment {
        var job: UInt64
        var worker: [UInt8]
    }

    /// What became of an `emit`.
    enum Emit: Equatable { case apply, duplicate, foreign }

    /// What became of a `done`.
    enum Done: Equatable {
        /// The job ended with its mutation applied; its worker's slot is free.
        case done
        /// The job ended without its mutation (the `done` came before any `emit`).
        case incomplete
        case foreign
    }

    private struct Worker {
        var identity: [UInt8]
        var capacity: Int
        var running = 0
    }

    private struct Job {
        /// The index of the worker holding it, `nil` while queued.
        var worker: Int?
        var applied = false
    }

    /// Registered workers; a worker's index never changes (a `bye` leaves it with capacity 0).
    private var workers: [Worker] = []
    private var indexByIdentity: [[UInt8]: Int] = [:]
    /// Open jobs: queued or held by a worker.
    private var jobs: [UInt64: Job] = [:]
    /// Jobs waiting for a slot, first at `head`.
    private var queue: [UInt64] = []
    private var head = 0

    /// Jobs sent to workers (sent again after a re-registration included).
    private(set) var dispatched: UInt64 = 0

    /// Workers that can take jobs.
    var workerCount: Int { workers.count(where: { $0.capacity > 0 }) }
    /// Jobs not ended.
    var openCount: Int { jobs.count }
    /// Jobs waiting for a worker.
    var queuedCount: Int { queue.count - head }

    /// A worker announced itself with `capacity`: its earlier jobs (if it registered before)
    /// are queued again first, then queued jobs go to whoever has room.
    mutating func register(_ identity: [UInt8], capacity: UInt64) -> [Assignment] {
        let clamped = Int(clamping: min(max(capacity, 1), UInt64(Self.maxCapacity)))
        if let index = indexByIdentity[identity] {
            takeBack(from: index)
            workers[index].capacity = clamped
        } else {
            indexByIdentity[identity] = workers.count
            workers.append(Worker(identity: identity, capacity: clamped))
        }
        return assignQueued()
    }

    /// A worker stops (`bye`): its unreported jobs go to the others.
    mutating func remove(_ identity: [UInt8]) -> [Assignment] {
        guard let index = indexByIdentity[identity] else { return [] }
        takeBack(from: index)
        workers[index].capacity = 0
        return assignQueued()
    }

    /// Whether `identity` registered.
    func knows(_ identity: [UInt8]) -> Bool { indexByIdentity[identity] != nil }

    /// A new job: sent at once to the least busy worker with room, else queued.
    mutating func enqueue(_ job: UInt64) -> Assignment? {
        guard let index = leastBusy() else {
            jobs[job] = Job(worker: nil)
            queue.append(job)
            return nil
        }
        jobs[job] = Job(worker: index)
        return assign(job, to: index)
    }

    /// `identity` emitted job `job`'s mutation.
    mutating func emit(_ job: UInt64, from identity: [UInt8]) -> Emit {
        guard let index = indexByIdentity[identity], let open = jobs[job], open.worker == index else { return .foreign }
        if open.applied { return .duplicate }
        jobs[job]?.applied = true
        return .apply
    }

    /// `identity` reported job `job` done; the freed slot takes the next queued job, if any.
    mutating func done(_ job: UInt64, from identity: [UInt8]) -> (Done, Assignment?) {
        guard let index = indexByIdentity[identity], let open = jobs[job], open.worker == index else { return (.foreign, nil) }
        jobs[job] = nil
        workers[index].running -= 1
        var next: Assignment?
        if workers[index].running < workers[index].capacity, let queued = dequeue() {
            jobs[queued]?.worker = index
            next = assign(queued, to: index)
        }
        return (open.applied ? .done : .incomplete, next)
    }

    // MARK: Private

    private mutating func assign(_ job: UInt64, to index: Int) -> Assignment {
        workers[index].running += 1
        dispatched += 1
        return Assignment(job: job, worker: workers[index].identity)
    }

    /// The registered worker with the fewest jobs among those with room.
    private func leastBusy() -> Int? {
        var best: Int?
        for index in workers.indices where workers[index].running < workers[index].capacity {
            if best.map({ workers[index].running < workers[$0].running }) ?? true { best = index }
        }
        return best
    }

    private mutating func dequeue() -> UInt64? {
        guard head < queue.count else { return nil }
        let job = queue[head]
        head += 1
        // Drop the consumed front once it is most of the array (amortised O(1)).
        if head >= 1_024 && head * 2 >= queue.count {
            queue.removeFirst(head)
            head = 0
        }
        return job
    }

    /// Puts every job worker `index` holds back at the front of the queue, oldest first.
    private mutating func takeBack(from index: Int) {
        let held = jobs.filter { $0.value.worker == index }.keys.sorted()
        guard !held.isEmpty else { return }
        for job in held { jobs[job]?.worker = nil }
        queue = held + queue[head...]
        head = 0
        workers[index].running = 0
    }

    /// Hands queued jobs to workers with room, least busy first.
    private mutating func assignQueued() -> [Assignment] {
        var assignments: [Assignment] = []
        while head < queue.count, let index = leastBusy(), let job = dequeue() {
            jobs[job]?.worker = index
            assignments.append(assign(job, to: index))
        }
        return assignments
    }
}
