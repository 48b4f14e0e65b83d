/// The sequencer's bookkeeping of unfinished jobs: what each has applied, what waits, and which
/// job identities are already spent. Codable so that a checkpoint restores dedup exactly.
///
/// Memory stays bounded by the number of *open* jobs: a finished job leaves no trace. An identity
/// that is not open counts as spent when its action was issued and (if that action still has
/// open jobs) its index is within the action's effects; everything else was never issued.
///
/// An action with one job (nearly every action with effects) has no ``ActionJobs`` entry: its
/// job's progress says it is alone (``JobProgress/sharesAction``), so opening and closing it
/// touch one table fewer, and with a backlog of 150,000 open jobs each table is a cache miss
/// per job. The entries exist for actions with several jobs, which count their jobs down.
///
/// Layout: what every event reads and writes (``JobProgress``, ``ActionJobs``) lives in
/// dictionaries whose types do not depend on the app; the app's values (each job's effect, the
/// rare out-of-order mutations) are in dictionaries of their own, off the path of an in-order
/// emit. The per-event members are `@inlinable`: the sequencer's per-event work is compiled for
/// each reactor (Reactor+Specialization.swift), and these with it; the paths that stay generic
/// over the app's reactor (checkpoints, cancellation, failure) look up the run-time type of
/// every generic container they touch, on every call.
@usableFromInline
struct JobLedger<Effect: Codable, Mutation: Codable> {
    /// Every open job's progress.
    @usableFromInline var open = JobTable<JobProgress>()
    /// Every open job's effect.
    @usableFromInline var effects = JobTable<Effect>()
    /// Emits that arrived early (gap before them) or while the lane was blocked, per job; a job
    /// with none has no entry (its progress counts them in `bufferedCount`).
    @usableFromInline var buffered: [JobID: [UInt32: Mutation]] = [:]
    /// Actions with more than one job and at least one open.
    @usableFromInline var actions: [UInt64: ActionJobs] = [:]
    @usableFromInline var lanes: [String: LaneQueue] = [:]
    /// The lane of every open job that runs in one (``JobProgress/inLane``).
    @usableFromInline var jobLanes: [JobID: String] = [:]
    /// The failure of every open job whose FAILED waits for its turn (``JobProgress/failed``).
    @usableFromInline var failures: [JobID: EffectFailure] = [:]

    @usableFromInline init() {}

    /// The lane of open job `id`, whose progress is `job`.
    @inlinable
    func lane(of id: JobID, _ job: JobProgress) -> String? { job.inLane ? jobLanes[id] : nil }

    /// Whether open job `id`, whose progress is `job`, may apply results now: it is in no lane,
    /// or first in its lane.
    @inlinable
    func isReady(_ id: JobID, _ job: JobProgress) -> Bool {
        guard let lane = lane(of: id, job) else { return true }
        return lanes[lane]?.first == id
    }

    /// Records the jobs of a newly accepted action.
    @inlinable
    mutating func open(actionSeq: UInt64, jobs: [Job<Effect>]) {
        guard !jobs.isEmpty else { return }
        let shares = jobs.count > 1
        for index in 0 ..< jobs.count {
            let id = jobs[index].id, lane = jobs[index].lane
            open[id] = JobProgress(inLane: lane != nil, sharesAction: shares)
            effects[id] = jobs[index].effect
            if let lane {
                jobLanes[id] = lane
                lanes[lane, default: LaneQueue()].append(id)
            }
        }
        if shares { actions[actionSeq] = ActionJobs(effectCount: UInt32(jobs.count), remaining: UInt32(jobs.count)) }
    }

    /// Holds `mutation`, the `emitIndex`-th of open job `id`, until its turn.
    @usableFromInline
    mutating func buffer(_ mutation: Mutation, job id: JobID, emitIndex: UInt32) {
        buffered[id, default: [:]][emitIndex] = mutation
        open.update(id) { $0.bufferedCount += 1 }
    }

    /// Takes the `emitIndex`-th mutation of job `id` out of the buffer, if it is there. The
    /// caller counts it off the job's `bufferedCount`.
    @inlinable
    mutating func takeBuffered(job id: JobID, emitIndex: UInt32) -> Mutation? {
        guard let mutation = buffered[id]?.removeValue(forKey: emitIndex) else { return nil }
        if buffered[id]?.isEmpty == true { buffered[id] = nil }
        return mutation
    }

    /// Whether the `emitIndex`-th mutation of job `id` waits in the buffer. Inlined, so that a
    /// job with nothing buffered (nearly every one) does not touch the app's mutation types.
    @inlinable
    func isBuffered(job id: JobID, emitIndex: UInt32, progress: JobProgress) -> Bool {
        progress.bufferedCount > 0 && buffered[id]?[emitIndex] != nil
    }

    /// Forgets a job that ended, and appends its action to `completed` when it was the
    /// action's last open job; returns the job now first in its lane, if any.
    @inlinable
    mutating func close(_ id: JobID, completing completed: inout [UInt64]) -> JobID? {
        guard let job = open.removeValue(forKey: id) else { return nil }
        effects[id] = nil
        if job.bufferedCount > 0 { buffered[id] = nil }
        if job.failed { failures[id] = nil }
        if !job.sharesAction {
            completed.append(id.actionSeq)
        } else if let index = actions.index(forKey: id.actionSeq) {
            // One lookup of the action, counted down or forgotten in place.
            if actions.values[index].remaining <= 1 {
                actions.remove(at: index)
                completed.append(id.actionSeq)
            } else {
                actions.values[index].remaining -= 1
            }
        }
        // In place: copying the lane out of the dictionary would copy all of it on every close.
        guard job.inLane, let lane = jobLanes.removeValue(forKey: id), lanes[lane] != nil else { return nil }
        lanes[lane]?.remove(id)
        guard let next = lanes[lane]?.first else {
            lanes[lane] = nil
            return nil
        }
        return next
    }

    /// Whether an identity that is not open was issued and has ended, or was never issued.
    @usableFromInline
    func isSpent(_ id: JobID, lastActionSeq: UInt64) -> Bool {
        guard id.actionSeq >= 1, id.actionSeq <= lastActionSeq else { return false }
        if let action = actions[id.actionSeq] { return id.effectIndex < action.effectCount }
        // An action with one job open: its job is index 0, and it is not `id`.
        return !hasOpenJobs(actionSeq: id.actionSeq)
    }

    /// Whether any job of action `actionSeq` is open.
    func hasOpenJobs(actionSeq: UInt64) -> Bool {
        actions[actionSeq] != nil || open[JobID(actionSeq: actionSeq, effectIndex: 0)] != nil
    }
}

/// Where one open job stands.
///
/// Plain values only: the ledger reads and writes a job's progress several times per event, and
/// a field holding a reference (the lane's name, a failure's message) made every copy retain and
/// release it, through the type's value witnesses. The rare lane and failure live in tables of
/// the ledger (``JobLedger/jobLanes``, ``JobLedger/failures``).
@usableFromInline
struct JobProgress: Hashable, Sendable {
    /// Whether the job runs in an ordered lane (named in ``JobLedger/jobLanes``).
    @usableFromInline var inLane: Bool
    /// Every emit below this index is applied.
    @usableFromInline var nextEmit: UInt32 = 0
    /// How many of its emits wait in the ledger's buffer.
    @usableFromInline var bufferedCount = 0
    /// The emit count a DONE declared; the job ends once that many emits are applied.
    @usableFromInline var declaredCount: UInt32?
    /// Whether a FAILED waits for the job's turn in its lane (its failure is in
    /// ``JobLedger/failures``).
    @usableFromInline var failed: Bool
    /// Whether its action has other jobs: then the ledger counts the action's open jobs in
    /// ``JobLedger/actions``; a job alone ends its action when it ends.
    @usableFromInline var sharesAction: Bool

    @usableFromInline
    init(inLane: Bool, sharesAction: Bool, nextEmit: UInt32 = 0, bufferedCount: Int = 0, declaredCount: UInt32? = nil,
         failed: Bool = false) {
        self.inLane = inLane
        self.sharesAction = sharesAction
        self.nextEmit = nextEmit
        self.bufferedCount = bufferedCount
        self.declaredCount = declaredCount
        self.failed = failed
    }

    /// Whether the worker has reported an end (DONE or FAILED).
    @inlinable
    var isReported: Bool { declaredCount != nil || failed }
}

/// Open jobs of one action.
@usableFromInline
struct ActionJobs: Codable, Hashable, Sendable {
    @usableFromInline var effectCount: UInt32
    @usableFromInline var remaining: UInt32

    @usableFromInline
    init(effectCount: UInt32, remaining: UInt32) {
        self.effectCount = effectCount
        self.remaining = remaining
    }
}

extension JobLedger: Sendable where Effect: Sendable, Mutation: Sendable {}

extension JobLedger: Codable {
    /// One open job as checkpoints store it: its effect and its progress together, the shape
    /// every checkpoint written so far has.
    struct StoredJob: Codable {
        var effect: Effect
        var lane: String?
        var nextEmit: UInt32 = 0
        var buffered: [UInt32: Mutation] = [:]
        var declaredCount: UInt32?
        var failure: EffectFailure?
    }

    private enum CodingKeys: String, CodingKey { case open, actions, lanes }

    @usableFromInline
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // Checkpoints list every action with open jobs; the ledger keeps those of several jobs.
        actions = try container.decode([UInt64: ActionJobs].self, forKey: .actions).filter { $0.value.effectCount > 1 }
        // In job order: the ledger's tables keep jobs opened in order next to each other.
        for (id, job) in try container.decode([JobID: StoredJob].self, forKey: .open).sorted(by: { $0.key < $1.key }) {
            open[id] = JobProgress(inLane: job.lane != nil, sharesAction: actions[id.actionSeq] != nil, nextEmit: job.nextEmit,
                                   bufferedCount: job.buffered.count, declaredCount: job.declaredCount, failed: job.failure != nil)
            effects[id] = job.effect
            if let lane = job.lane { jobLanes[id] = lane }
            if let failure = job.failure { failures[id] = failure }
            if !job.buffered.isEmpty { buffered[id] = job.buffered }
        }
        lanes = try container.decode([String: LaneQueue].self, forKey: .lanes)
    }

    @usableFromInline
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(storedJobs, forKey: .open)
        try container.encode(storedActions, forKey: .actions)
        try container.encode(lanes, forKey: .lanes)
    }

    /// Every action with open jobs, as checkpoints have always listed them: those of one job
    /// included, so that a checkpoint reads the same in every release.
    var storedActions: [UInt64: ActionJobs] {
        var stored = actions
        open.forEach { id, progress in
            if !progress.sharesAction { stored[id.actionSeq] = ActionJobs(effectCount: 1, remaining: 1) }
        }
        return stored
    }

    /// The open jobs in their stored shape.
    var storedJobs: [JobID: StoredJob] {
        var stored: [JobID: StoredJob] = [:]
        open.forEach { id, progress in
            guard let effect = effects[id] else { return }
            stored[id] = StoredJob(effect: effect, lane: lane(of: id, progress), nextEmit: progress.nextEmit, buffered: buffered[id] ?? [:],
                                   declaredCount: progress.declaredCount, failure: progress.failed ? failures[id] : nil)
        }
        return stored
    }
}

/// The open jobs of one ordered lane, oldest first.
///
/// Jobs leave a lane from the front (a lane's jobs end in order), which is O(1) here: the lane
/// keeps a moving head instead of shifting the whole array, so a long lane costs nothing per
/// job that ends. Encoded as a plain array of the jobs, as the lane was before.
@usableFromInline
struct LaneQueue: Codable, Sendable {
    private var ids: [JobID] = []
    private var head = 0

    @usableFromInline
    init() {}

    @usableFromInline
    var first: JobID? { head < ids.count ? ids[head] : nil }
    var isEmpty: Bool { head == ids.count }
    /// The jobs, oldest first.
    var jobs: ArraySlice<JobID> { ids[head...] }

    @usableFromInline
    mutating func append(_ id: JobID) { ids.append(id) }

    /// Removes `id`; O(1) when it is the first, as it is when a lane's job ends.
    @usableFromInline
    mutating func remove(_ id: JobID) {
        if first == id {
            head += 1
        } else if let index = ids[head...].firstIndex(of: id) {
            ids.remove(at: index)
        }
        if head == ids.count {
            ids.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1_024 && head * 2 >= ids.count {
            ids.removeFirst(head)
            head = 0
        }
    }

    @usableFromInline
    init(from decoder: any Decoder) throws {
        ids = try decoder.singleValueContainer().decode([JobID].self)
    }

    @usableFromInline
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Array(jobs))
    }
}

extension JobLedger {
    /// The same ledger with every open job's effect and buffered mutations converted.
    func converted<E: Codable, M: Codable>(
        effect: (Effect) throws -> E, mutation: (Mutation) throws -> M
    ) rethrows -> JobLedger<E, M> {
        var result = JobLedger<E, M>()
        result.open = open
        try effects.forEach { id, value in result.effects[id] = try effect(value) }
        for (id, waiting) in buffered {
            var converted: [UInt32: M] = [:]
            for (index, value) in waiting { converted[index] = try mutation(value) }
            result.buffered[id] = converted
        }
        result.actions = actions
        result.lanes = lanes
        result.jobLanes = jobLanes
        result.failures = failures
        return result
    }
}
