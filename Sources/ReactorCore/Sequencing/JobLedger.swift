/// The sequencer's bookkeeping of unfinished jobs: what each has applied, what waits, and which
/// job identities are already spent. Codable so that a checkpoint restores dedup exactly.
///
/// Memory stays bounded by the number of *open* jobs: a finished job leaves no trace. An identity
/// that is not open counts as spent when its action was issued and (if that action still has
/// open jobs) its index is within the action's effects; everything else was never issued.
struct JobLedger<Effect: Codable, Mutation: Codable>: Codable {
    /// One job that has not ended yet.
    struct OpenJob: Codable {
        var effect: Effect
        var lane: String?
        /// Every emit below this index is applied.
        var nextEmit: UInt32 = 0
        /// Emits that arrived early (gap before them) or while the lane was blocked.
        var buffered: [UInt32: Mutation] = [:]
        /// The emit count a DONE declared; the job ends once that many emits are applied.
        var declaredCount: UInt32?
        /// A FAILED that waits for the job's turn in its lane.
        var failure: EffectFailure?

        /// Whether the worker has reported an end (DONE or FAILED).
        var isReported: Bool { declaredCount != nil || failure != nil }
    }

    /// Open jobs of one action.
    struct ActionJobs: Codable {
        var effectCount: UInt32
        var remaining: UInt32
    }

    var open: [JobID: OpenJob] = [:]
    var actions: [UInt64: ActionJobs] = [:]
    var lanes: [String: LaneQueue] = [:]

    /// Whether the job may apply results now: it is in no lane, or first in its lane.
    func isReady(_ id: JobID, lane: String?) -> Bool {
        guard let lane else { return true }
        return lanes[lane]?.first == id
    }

    /// Records the jobs of a newly accepted action.
    mutating func open(actionSeq: UInt64, jobs: [Job<Effect>]) {
        guard !jobs.isEmpty else { return }
        for job in jobs {
            open[job.id] = OpenJob(effect: job.effect, lane: job.lane)
            if let lane = job.lane { lanes[lane, default: LaneQueue()].append(job.id) }
        }
        actions[actionSeq] = ActionJobs(effectCount: UInt32(jobs.count), remaining: UInt32(jobs.count))
    }

    /// Forgets a job that ended; returns the job now first in its lane, if any.
    mutating func close(_ id: JobID) -> JobID? {
        guard let job = open.removeValue(forKey: id) else { return nil }
        if var action = actions[id.actionSeq] {
            action.remaining -= 1
            actions[id.actionSeq] = action.remaining == 0 ? nil : action
        }
        // In place: copying the lane out of the dictionary would copy all of it on every close.
        guard let lane = job.lane, lanes[lane] != nil else { return nil }
        lanes[lane]?.remove(id)
        guard let next = lanes[lane]?.first else {
            lanes[lane] = nil
            return nil
        }
        return next
    }

    /// Whether an identity that is not open was issued and has ended, or was never issued.
    func isSpent(_ id: JobID, lastActionSeq: UInt64) -> Bool {
        guard id.actionSeq >= 1, id.actionSeq <= lastActionSeq else { return false }
        if let action = actions[id.actionSeq] { return id.effectIndex < action.effectCount }
        return true
    }
}

extension JobLedger: Sendable where Effect: Sendable, Mutation: Sendable {}

/// The open jobs of one ordered lane, oldest first.
///
/// Jobs leave a lane from the front (a lane's jobs end in order), which is O(1) here: the lane
/// keeps a moving head instead of shifting the whole array, so a long lane costs nothing per
/// job that ends. Encoded as a plain array of the jobs, as the lane was before.
struct LaneQueue: Codable, Sendable {
    private var ids: [JobID] = []
    private var head = 0

    init() {}

    var first: JobID? { head < ids.count ? ids[head] : nil }
    var isEmpty: Bool { head == ids.count }
    /// The jobs, oldest first.
    var jobs: ArraySlice<JobID> { ids[head...] }

    mutating func append(_ id: JobID) { ids.append(id) }

    /// Removes `id`; O(1) when it is the first, as it is when a lane's job ends.
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

    init(from decoder: any Decoder) throws {
        ids = try decoder.singleValueContainer().decode([JobID].self)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Array(jobs))
    }
}
extension JobLedger.OpenJob: Sendable where Effect: Sendable, Mutation: Sendable {}

extension JobLedger {
    /// The same ledger with every open job's effect and buffered mutations converted.
    func converted<E: Codable, M: Codable>(
        effect: (Effect) throws -> E, mutation: (Mutation) throws -> M
    ) rethrows -> JobLedger<E, M> {
        var result = JobLedger<E, M>()
        for (id, job) in open {
            var buffered: [UInt32: M] = [:]
            for (index, value) in job.buffered { buffered[index] = try mutation(value) }
            result.open[id] = JobLedger<E, M>.OpenJob(
                effect: try effect(job.effect), lane: job.lane, nextEmit: job.nextEmit, buffered: buffered,
                declaredCount: job.declaredCount, failure: job.failure)
        }
        result.actions = actions.mapValues { JobLedger<E, M>.ActionJobs(effectCount: $0.effectCount, remaining: $0.remaining) }
        result.lanes = lanes
        return result
    }
}
