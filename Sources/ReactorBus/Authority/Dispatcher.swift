import ReactorCore
import ReactorWire

/// Decides which worker runs which job: capacity, effect kinds, heartbeats, re-dispatch, trust.
///
/// A pure value driven by the authority's loop: events in (a worker announced itself, a job
/// arrived, a job ended, time passed), assignments out. Time is a plain millisecond count so
/// tests can drive it.
///
/// A worker is trusted with at most `maxWorkerCapacity` jobs at once, whatever it announces. A
/// worker's slot stays taken until the worker itself reports the job's end, even when the job
/// was taken from it after `jobTimeout`: a worker that hangs does not get more work. A worker
/// whose jobs time out `quarantineAfter` times in a row is quarantined: its jobs go to other
/// workers at once and it gets none until a cool-off has passed, then one at a time on
/// probation until one ends in time (see ``WorkerHealth``).
///
/// A worker's entry changes through its index (`workers.values[index]`), not through
/// `workers[peer]?.…`: that optional subscript's accessor moves the whole entry out and back, in
/// a frame too large for the caller's buffer, so each change cost a `malloc`.
struct Dispatcher: Sendable {
    /// One job handed to one worker.
    struct Assignment: Hashable, Sendable {
        var job: JobID
        var worker: PeerID
    }

    /// What a tick found.
    struct Expiry: Sendable, Equatable {
        /// Workers that stayed silent too long, now forgotten.
        var deadWorkers: [PeerID] = []
        /// The names those workers announced, by routing id (for log lines: they are forgotten).
        var deadWorkerNames: [PeerID: String] = [:]
        /// Jobs taken back from dead or slow workers and queued again.
        var requeued: [JobID] = []
        /// How many of them ran longer than the job timeout.
        var timedOut = 0
        /// New assignments that the requeued jobs got at once.
        var assignments: [Assignment] = []
        /// Workers quarantined by this tick (their jobs are among `requeued`).
        var quarantined: [PeerID] = []
        /// Quarantined workers whose cool-off ended: on probation, one job at a time.
        var onProbation: [PeerID] = []
    }

    /// A worker's entry. What placing a job reads (its load, capacity, health and whether it
    /// serves every kind) are plain values: reading a field that holds a reference (a set, a
    /// string) from the table retains and releases it, for every worker, per job placed.
    struct Worker: Sendable {
        var name: String
        /// The capacity it announced, clamped to `maxWorkerCapacity`.
        var capacity: Int
        let kinds: Set<String>
        /// Whether it announced no kinds: then it serves every kind.
        let servesEveryKind: Bool
        /// How many jobs it owns: the owner table says which. Counted rather than listed, as
        /// a set of them cost an insert and a delete (with its rehashes) per job.
        private(set) var owned = 0
        /// Jobs taken from it after a timeout that it has not reported yet: they keep a slot
        /// each (a worker that hangs gets no more work). Empty unless a job timed out.
        private(set) var released: Set<JobID> = []
        /// `released.count`.
        private(set) var releasedCount = 0
        var lastHeard: UInt64
        var health = WorkerHealth()

        init(name: String, capacity: Int, kinds: Set<String>, lastHeard: UInt64) {
            self.name = name
            self.capacity = capacity
            self.kinds = kinds
            self.servesEveryKind = kinds.isEmpty
            self.lastHeard = lastHeard
        }

        /// Announced kinds may be patterns (`cart.*`: one part of a composed app).
        func serves(_ kind: String) -> Bool { servesEveryKind || EffectKind.serves(kinds, kind: kind) }
        /// Jobs it may hold at once now: its capacity, 1 on probation, 0 in quarantine.
        var trustedCapacity: Int { health.capacity(trusted: capacity) }
        /// The slots its jobs take: those it owns and those taken from it but still running.
        var load: Int { owned + releasedCount }

        /// `job` is its own now. Given back to the worker it was taken from, it takes one slot,
        /// as before it timed out.
        mutating func take(_ job: JobID) {
            owned += 1
            freeSlot(of: job)
        }

        /// A job it owned is no longer its own: it ended, or was cancelled, or (`stillRuns`) was
        /// taken from it after a timeout while it still runs there, keeping its slot.
        mutating func lose(_ job: JobID, stillRuns: Bool = false) {
            owned -= 1
            if stillRuns, released.insert(job).inserted { releasedCount += 1 }
        }

        /// Frees the slot `job` kept after it was taken; whether it kept one.
        @discardableResult
        mutating func freeSlot(of job: JobID) -> Bool {
            guard releasedCount > 0, released.remove(job) != nil else { return false }
            releasedCount -= 1
            return true
        }

        /// Frees every slot: its own jobs were taken from it and queued again, and those kept
        /// after a timeout are forgotten.
        mutating func freeAllSlots() {
            owned = 0
            released = []
            releasedCount = 0
        }
    }

    struct Owner: Sendable {
        var worker: PeerID
        var since: UInt64
        /// The job's effect kind, to queue it again with (a waiting job's is in its queue entry).
        var kind: String
    }

    typealias Pending = JobQueue.Pending

    /// A worker silent for this long is dead.
    let deadAfter: UInt64
    /// A job running this long on one worker is given to another.
    let jobTimeout: UInt64
    /// The most jobs one worker is given at once, whatever capacity it announces.
    let maxWorkerCapacity: Int
    /// Job timeouts in a row that quarantine a worker; 0 never quarantines.
    let quarantineAfter: Int
    /// The first quarantine's length; each failed probation doubles it (up to 32 times).
    let coolOff: UInt64

    private(set) var workers: [PeerID: Worker] = [:]
    /// The jobs given to a worker. A job's kind travels with it (in its queue entry while it
    /// waits, here while it runs), so that no table of every open job is kept: with a backlog of
    /// a hundred thousand jobs, each such table cost a cache miss per job event.
    private var owners: [JobID: Owner] = [:]
    /// Jobs waiting for a worker. Freeing a slot looks only at the first job of each kind, so a
    /// long backlog costs nothing per report (it used to be walked in full on every DONE).
    private var queue = JobQueue()

    /// Creates a dispatcher.
    /// - Parameters:
    ///   - deadAfterMilliseconds: silence after which a worker is dead (3 heartbeats).
    ///   - jobTimeoutMilliseconds: time after which a running job is given to another worker.
    ///   - maxWorkerCapacity: the most jobs one worker is given at once (at least 1).
    ///   - quarantineAfter: job timeouts in a row that quarantine a worker; 0 never does.
    ///   - coolOffMilliseconds: the first quarantine's length; `nil` is `jobTimeoutMilliseconds`.
    init(deadAfterMilliseconds: UInt64 = 3_000, jobTimeoutMilliseconds: UInt64 = 60_000, maxWorkerCapacity: Int = 256,
                quarantineAfter: Int = 3, coolOffMilliseconds: UInt64? = nil) {
        self.deadAfter = deadAfterMilliseconds
        self.jobTimeout = jobTimeoutMilliseconds
        self.maxWorkerCapacity = max(1, maxWorkerCapacity)
        self.quarantineAfter = max(0, quarantineAfter)
        self.coolOff = max(1, coolOffMilliseconds ?? jobTimeoutMilliseconds)
    }

    /// Jobs waiting for a worker.
    var queuedCount: Int { queue.count }
    /// Workers known.
    var workerCount: Int { workers.count }
    /// Whether `peer` is a known worker.
    func knows(_ peer: PeerID) -> Bool { workers[peer] != nil }
    /// The worker that currently owns `job`, if any.
    func owner(of job: JobID) -> PeerID? { owners[job]?.worker }
    /// The name a worker announced.
    func name(of peer: PeerID) -> String? { workers[peer]?.name }
    /// The jobs `peer` may hold at once now: its clamped capacity, 1 on probation, 0 in quarantine.
    func trustedCapacity(of peer: PeerID) -> Int? { workers[peer]?.trustedCapacity }
    /// Whether `peer` is quarantined (gets no job until its cool-off ends).
    func isQuarantined(_ peer: PeerID) -> Bool { workers[peer]?.health.isQuarantined ?? false }
    /// Workers quarantined now.
    var quarantinedCount: Int { workers.values.count(where: \.health.isQuarantined) }
    /// The capacity a worker announcing `announced` is trusted with when healthy.
    func trustedCapacity(announced: UInt64) -> Int { Int(clamping: min(max(1, announced), UInt64(maxWorkerCapacity))) }

    /// A worker announced itself. A worker that announces itself again has restarted its
    /// session: the jobs it had are queued again. Its capacity is clamped to `maxWorkerCapacity`;
    /// a quarantine or probation outlives a new `ready` on the same connection (it would
    /// otherwise be a way out for a worker that keeps failing).
    mutating func register(_ peer: PeerID, name: String, capacity: Int, kinds: [String], now: UInt64) -> [Assignment] {
        var requeue: [Pending] = []
        var worker = Worker(name: name, capacity: min(max(1, capacity), maxWorkerCapacity), kinds: Set(kinds), lastHeard: now)
        if let previous = workers[peer] {
            // Only its own: a job taken from it after a timeout belongs to another worker now.
            requeue = takeOwned(from: peer, avoid: nil)
            worker.health = previous.health
        }
        workers[peer] = worker
        queue.prepend(contentsOf: requeue)
        return assignQueued(now: now)
    }

    /// A new job to run.
    mutating func enqueue(_ job: JobID, kind: String, now: UInt64) -> Assignment? {
        if let worker = pickWorker(for: kind, avoiding: nil) {
            return assign(job, to: worker, kind: kind, now: now)
        }
        queue.append(Pending(job: job, kind: kind, avoid: nil))
        return nil
    }

    /// A worker sent something: it is alive.
    mutating func heard(from peer: PeerID, now: UInt64) {
        if let index = workers.index(forKey: peer) { workers.values[index].lastHeard = now }
    }

    /// A worker reported the end of a job (DONE or FAILED). Frees its slot.
    ///
    /// A report of a job the worker still owns came in time: it clears the worker's run of
    /// timeouts and ends a probation.
    ///
    /// The free slot may take a waiting job: call ``assignNext(now:)`` until it returns `nil`.
    ///
    /// - Returns: whether the job was the worker's to report (if not, its report must be
    ///   ignored), and whether the report ended the worker's probation (it has its full
    ///   capacity again).
    mutating func finished(_ job: JobID, by peer: PeerID, now: UInt64) -> (owned: Bool, recovered: Bool) {
        let owned = release(job, ownedBy: peer) != nil
        var recovered = false
        if let index = workers.index(forKey: peer) {
            if owned {
                workers.values[index].lose(job)
                recovered = workers.values[index].health.reportedInTime()
            } else {
                workers.values[index].freeSlot(of: job)
            }
        }
        return (owned, recovered)
    }

    // MARK: Cancellation

    /// Forgets a job the sequencer cancelled: out of the queue if it waits, and off every worker
    /// that holds it (its owner, and one it was taken from after a timeout), whose slot frees at
    /// once: the authority tells those workers to stop it. A cancelled job is never retried,
    /// timed out or re-dispatched.
    ///
    /// - Returns: whether it was waiting in the queue, the workers holding it, and the
    ///   assignments the freed slots made possible.
    mutating func cancel(_ job: JobID, now: UInt64) -> (queued: Bool, holders: [PeerID], assignments: [Assignment]) {
        // A job is either given to a worker or waiting (a job taken from a slow worker waits
        // again, while that worker may still hold it).
        let owner = owners.removeValue(forKey: job)?.worker
        let queued = owner == nil && queue.remove(job)
        var holders: [PeerID] = []
        var index = workers.startIndex
        while index != workers.endIndex {
            defer { workers.formIndex(after: &index) }
            if workers.keys[index] == owner {
                workers.values[index].lose(job)
                holders.append(workers.keys[index])
            } else if workers.values[index].freeSlot(of: job) {
                holders.append(workers.keys[index])
            }
        }
        return (queued, holders, holders.isEmpty ? [] : assignQueued(now: now))
    }

    /// Every known worker.
    var workerIDs: [PeerID] { Array(workers.keys) }

    /// Forgets a worker that said goodbye; queues its jobs again at once.
    mutating func forget(_ peer: PeerID, now: UInt64) -> Expiry {
        var expiry = Expiry()
        guard workers.removeValue(forKey: peer) != nil else { return expiry }
        let requeue = takeOwned(from: peer, avoid: peer)
        expiry.requeued = requeue.map(\.job)
        queue.prepend(contentsOf: requeue)
        expiry.assignments = assignQueued(now: now)
        return expiry
    }

    /// Whether `peer` may send results for `job` now.
    func isOwner(_ peer: PeerID, of job: JobID) -> Bool { owners[job]?.worker == peer }

    /// Forgets dead workers, takes back jobs that ran too long and queues them again,
    /// quarantines workers whose jobs keep timing out, and puts on probation those whose
    /// cool-off ended.
    mutating func tick(now: UInt64) -> Expiry {
        var expiry = Expiry()
        for (peer, worker) in workers where now >= worker.lastHeard + deadAfter {
            expiry.deadWorkers.append(peer)
            expiry.deadWorkerNames[peer] = worker.name
            for pending in takeOwned(from: peer, avoid: peer) {
                expiry.requeued.append(pending.job)
                queue.prepend(pending)
            }
            workers[peer] = nil
        }
        let overdue = owners.filter { now >= $0.value.since + jobTimeout }.sorted { $0.key < $1.key }
        // A quarantine takes back the worker's other jobs too: skip those already taken.
        for (job, owner) in overdue where release(job, ownedBy: owner.worker) != nil {
            // Taken from the worker, which still runs it: its slot stays taken until it reports.
            if let index = workers.index(forKey: owner.worker) {
                workers.values[index].lose(job, stillRuns: true)
            }
            expiry.requeued.append(job)
            expiry.timedOut += 1
            queue.append(Pending(job: job, kind: owner.kind, avoid: owner.worker))
            if workers[owner.worker]?.health.timedOut(now: now, quarantineAfter: quarantineAfter, coolOff: coolOff) == true {
                expiry.quarantined.append(owner.worker)
                expiry.requeued += takeBack(from: owner.worker)
            }
        }
        let quarantined = workers.compactMap { $0.value.health.isQuarantined ? $0.key : nil }
        for peer in quarantined where workers[peer]?.health.wake(now: now) == true {
            expiry.onProbation.append(peer)
        }
        expiry.assignments = assignQueued(now: now)
        return expiry
    }

    /// Takes every job a quarantined worker owns, ahead of the backlog, and frees all its slots
    /// (also those still held by jobs that timed out): on probation it starts from nothing.
    private mutating func takeBack(from peer: PeerID) -> [JobID] {
        guard let index = workers.index(forKey: peer) else { return [] }
        let jobs = takeOwned(from: peer, avoid: peer)
        workers.values[index].freeAllSlots()
        queue.prepend(contentsOf: jobs)
        return jobs.map(\.job)
    }

    // MARK: Internals

    /// The jobs `peer` owns, in job order, as queue entries (with their kinds), no longer owned
    /// by anyone. Walks the owner table: a worker's jobs are taken only when it restarts, leaves,
    /// dies or is quarantined. The caller settles the worker's count.
    private mutating func takeOwned(from peer: PeerID, avoid: PeerID?) -> [Pending] {
        owners.compactMap { $0.value.worker == peer ? $0.key : nil }.sorted().compactMap { job in
            guard let owner = release(job, ownedBy: peer) else { return nil }
            return Pending(job: job, kind: owner.kind, avoid: avoid)
        }
    }

    /// Forgets that `peer` owns `job`, in one lookup of the job; the ownership it ends, or `nil`
    /// when `peer` does not own the job (it was taken back, or given to another worker).
    private mutating func release(_ job: JobID, ownedBy peer: PeerID) -> Owner? {
        guard let index = owners.index(forKey: job), owners.values[index].worker == peer else { return nil }
        return owners.remove(at: index).value
    }

    /// The effect kind of a job given to a worker, while it has it.
    func kind(ofAssigned job: JobID) -> String? { owners[job]?.kind }

    /// Gives waiting jobs to workers with room, oldest first, until no waiting job has a worker:
    /// the same jobs, in the same order, as walking the whole queue, since whether a job can be
    /// placed depends only on its kind and free slots only get fewer as jobs are placed.
    mutating func assignQueued(now: UInt64) -> [Assignment] {
        var assignments: [Assignment] = []
        while let assignment = assignNext(now: now) { assignments.append(assignment) }
        return assignments
    }

    /// Gives the first waiting job that some worker has room for to the least busy such
    /// worker; `nil` when no waiting job fits. After ``finished(_:by:now:)``, call it until
    /// `nil`: one job at a time, so that the job path builds no array of assignments (a
    /// worker's report freed a slot, and made an array of one assignment, for every job).
    mutating func assignNext(now: UInt64) -> Assignment? {
        guard !queue.isEmpty, !workers.isEmpty,
              let (pending, worker) = queue.popFirst(placedBy: { Self.pickWorker(in: workers, for: $0.kind, avoiding: $0.avoid) })
        else { return nil }
        return assign(pending.job, to: worker, kind: pending.kind, now: now)
    }

    /// The least busy worker with room that serves `kind`, preferring any but `avoiding`.
    ///
    /// Walks the table by index and reads each worker in place: `for (peer, worker) in workers`
    /// copied every worker (its name, kinds and sets retained and released) for each
    /// job placed, and only plain fields are read (see ``Worker``).
    private func pickWorker(for kind: String, avoiding: PeerID?) -> PeerID? {
        Self.pickWorker(in: workers, for: kind, avoiding: avoiding)
    }

    private static func pickWorker(in workers: [PeerID: Worker], for kind: String, avoiding: PeerID?) -> PeerID? {
        var best: (index: Dictionary<PeerID, Worker>.Index, load: Int)?
        var fallback: Dictionary<PeerID, Worker>.Index?
        var index = workers.startIndex
        while index != workers.endIndex {
            defer { workers.formIndex(after: &index) }
            let load = workers.values[index].load
            guard load < workers.values[index].trustedCapacity, workers.values[index].serves(kind) else { continue }
            if let avoiding, workers.keys[index] == avoiding {
                fallback = index
                continue
            }
            if load < best?.load ?? Int.max {
                best = (index, load)
            }
        }
        return (best?.index ?? fallback).map { workers.keys[$0] }
    }

    private mutating func assign(_ job: JobID, to peer: PeerID, kind: String, now: UInt64) -> Assignment {
        if let index = workers.index(forKey: peer) { workers.values[index].take(job) }
        owners[job] = Owner(worker: peer, since: now, kind: kind)
        return Assignment(job: job, worker: peer)
    }
}
