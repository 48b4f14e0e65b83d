import ReactorCore

/// Decides which worker runs which job: capacity, effect kinds, heartbeats, re-dispatch.
///
/// A pure value driven by the authority's loop: events in (a worker announced itself, a job
/// arrived, a job ended, time passed), assignments out. Time is a plain millisecond count so
/// tests can drive it.
///
/// A worker's slot stays taken until the worker itself reports the job's end, even when the job
/// was taken from it after `jobTimeout`: a worker that hangs does not get more work.
public struct Dispatcher: Sendable {
    /// One job handed to one worker.
    public struct Assignment: Hashable, Sendable {
        public var job: JobID
        public var worker: PeerID
    }

    /// What a tick found.
    public struct Expiry: Sendable, Equatable {
        /// Workers that stayed silent too long, now forgotten.
        public var deadWorkers: [PeerID] = []
        /// Jobs taken back from dead or slow workers and queued again.
        public var requeued: [JobID] = []
        /// New assignments that the requeued jobs got at once.
        public var assignments: [Assignment] = []
    }

    struct Worker: Sendable {
        var name: String
        var capacity: Int
        var kinds: Set<String>
        var running: Set<JobID> = []
        var lastHeard: UInt64

        func serves(_ kind: String) -> Bool { kinds.isEmpty || kinds.contains(kind) }
        var hasRoom: Bool { running.count < capacity }
    }

    struct Owner: Sendable {
        var worker: PeerID
        var since: UInt64
    }

    typealias Pending = JobQueue.Pending

    /// A worker silent for this long is dead.
    public let deadAfter: UInt64
    /// A job running this long on one worker is given to another.
    public let jobTimeout: UInt64

    private(set) var workers: [PeerID: Worker] = [:]
    private var owners: [JobID: Owner] = [:]
    private var jobKinds: [JobID: String] = [:]
    /// Jobs waiting for a worker. Freeing a slot looks only at the first job of each kind, so a
    /// long backlog costs nothing per report (it used to be walked in full on every DONE).
    private var queue = JobQueue()

    /// Creates a dispatcher.
    /// - Parameters:
    ///   - deadAfterMilliseconds: silence after which a worker is dead (3 heartbeats).
    ///   - jobTimeoutMilliseconds: time after which a running job is given to another worker.
    public init(deadAfterMilliseconds: UInt64 = 3_000, jobTimeoutMilliseconds: UInt64 = 60_000) {
        self.deadAfter = deadAfterMilliseconds
        self.jobTimeout = jobTimeoutMilliseconds
    }

    /// Jobs waiting for a worker.
    public var queuedCount: Int { queue.count }
    /// Workers known.
    public var workerCount: Int { workers.count }
    /// Whether `peer` is a known worker.
    public func knows(_ peer: PeerID) -> Bool { workers[peer] != nil }
    /// The worker that currently owns `job`, if any.
    public func owner(of job: JobID) -> PeerID? { owners[job]?.worker }
    /// The name a worker announced.
    public func name(of peer: PeerID) -> String? { workers[peer]?.name }

    /// A worker announced itself. A worker that announces itself again has restarted its
    /// session: the jobs it had are queued again.
    public mutating func register(_ peer: PeerID, name: String, capacity: Int, kinds: [String], now: UInt64) -> [Assignment] {
        var requeue: [JobID] = []
        if let previous = workers[peer] {
            requeue = previous.running.filter { owners[$0]?.worker == peer }.sorted()
            for job in previous.running { owners[job] = nil }
        }
        workers[peer] = Worker(name: name, capacity: max(1, capacity), kinds: Set(kinds), lastHeard: now)
        queue.prepend(contentsOf: requeue.map { Pending(job: $0, kind: kind(of: $0), avoid: nil) })
        return assignQueued(now: now)
    }

    /// A new job to run.
    public mutating func enqueue(_ job: JobID, kind: String, now: UInt64) -> Assignment? {
        jobKinds[job] = kind
        if let worker = pickWorker(for: kind, avoiding: nil) {
            return assign(job, to: worker, now: now)
        }
        queue.append(Pending(job: job, kind: kind, avoid: nil))
        return nil
    }

    /// A worker sent something: it is alive.
    public mutating func heard(from peer: PeerID, now: UInt64) {
        workers[peer]?.lastHeard = now
    }

    /// A worker reported the end of a job (DONE or FAILED). Frees its slot.
    ///
    /// - Returns: whether the job was the worker's to report (if not, its report must be
    ///   ignored), and the assignments the free slot made possible.
    public mutating func finished(_ job: JobID, by peer: PeerID, now: UInt64) -> (owned: Bool, assignments: [Assignment]) {
        let owned = owners[job]?.worker == peer
        workers[peer]?.running.remove(job)
        if owned {
            owners[job] = nil
            jobKinds[job] = nil
        }
        return (owned, assignQueued(now: now))
    }

    /// Every known worker.
    public var workerIDs: [PeerID] { Array(workers.keys) }

    /// Forgets a worker that said goodbye; queues its jobs again at once.
    public mutating func forget(_ peer: PeerID, now: UInt64) -> Expiry {
        var expiry = Expiry()
        guard let worker = workers.removeValue(forKey: peer) else { return expiry }
        for job in worker.running.sorted() where owners[job]?.worker == peer {
            owners[job] = nil
            expiry.requeued.append(job)
        }
        queue.prepend(contentsOf: expiry.requeued.map { Pending(job: $0, kind: kind(of: $0), avoid: peer) })
        expiry.assignments = assignQueued(now: now)
        return expiry
    }

    /// Whether `peer` may send results for `job` now.
    public func isOwner(_ peer: PeerID, of job: JobID) -> Bool { owners[job]?.worker == peer }

    /// Forgets dead workers and takes back jobs that ran too long; queues their jobs again.
    public mutating func tick(now: UInt64) -> Expiry {
        var expiry = Expiry()
        for (peer, worker) in workers where now >= worker.lastHeard + deadAfter {
            expiry.deadWorkers.append(peer)
            for job in worker.running.sorted() where owners[job]?.worker == peer {
                owners[job] = nil
                expiry.requeued.append(job)
                queue.prepend(Pending(job: job, kind: kind(of: job), avoid: peer))
            }
            workers[peer] = nil
        }
        for (job, owner) in owners.sorted(by: { $0.key < $1.key }) where now >= owner.since + jobTimeout {
            owners[job] = nil
            expiry.requeued.append(job)
            queue.append(Pending(job: job, kind: kind(of: job), avoid: owner.worker))
        }
        expiry.assignments = assignQueued(now: now)
        return expiry
    }

    // MARK: Internals

    private func kind(of job: JobID) -> String { jobKinds[job] ?? "" }

    /// The effect kind `job` was queued with, while the dispatcher knows the job.
    public func queuedKind(of job: JobID) -> String? { jobKinds[job] }

    /// Gives waiting jobs to workers with room, oldest first, until no waiting job has a worker:
    /// the same jobs, in the same order, as walking the whole queue, since whether a job can be
    /// placed depends only on its kind and free slots only get fewer as jobs are placed.
    private mutating func assignQueued(now: UInt64) -> [Assignment] {
        guard !queue.isEmpty, !workers.isEmpty else { return [] }
        var assignments: [Assignment] = []
        while let (pending, worker) = queue.first(placedBy: { pickWorker(for: $0.kind, avoiding: $0.avoid) }) {
            queue.popFirst(ofKind: pending.kind)
            assignments.append(assign(pending.job, to: worker, now: now))
        }
        return assignments
    }

    /// The least busy worker with room that serves `kind`, preferring any but `avoiding`.
    private func pickWorker(for kind: String, avoiding: PeerID?) -> PeerID? {
        var best: (peer: PeerID, load: Int)?
        var fallback: PeerID?
        for (peer, worker) in workers where worker.hasRoom && worker.serves(kind) {
            if peer == avoiding {
                fallback = peer
                continue
            }
            if worker.running.count < best?.load ?? Int.max {
                best = (peer, worker.running.count)
            }
        }
        return best?.peer ?? fallback
    }

    private mutating func assign(_ job: JobID, to peer: PeerID, now: UInt64) -> Assignment {
        workers[peer]?.running.insert(job)
        owners[job] = Owner(worker: peer, since: now)
        return Assignment(job: job, worker: peer)
    }
}
