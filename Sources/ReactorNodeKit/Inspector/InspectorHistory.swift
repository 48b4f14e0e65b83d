import Glibc
import MessagePack
import ReactorCore
import ReactorWire
import Synchronization

/// What an inspector knows about a cluster: the live state, the last mutations and actions, full
/// states at intervals (to rebuild any version in its window), and the authority's stats over the
/// last minutes. Fed by the feed (``InspectorFeed``) or by the journal (``InspectorJournal``);
/// read by the HTTP handlers. Every method is safe from any thread; memory is bounded by
/// ``InspectorLimits``.
///
/// States are rebuilt the way the authority built them: a fetched or journalled state, reduced by
/// the following mutations with the app's own `reduce` (like ``Observer``'s mutation following).
final class InspectorHistory<R: Reactor>: Sendable {
    /// One applied mutation as the inspector saw it.
    struct Recorded: Sendable {
        var version: UInt64
        var actionSeq: UInt64
        var origin: MutationOrigin
        var mutation: R.Mutation
        /// When the inspector saw it, in milliseconds since the epoch.
        var seenAt: Double
    }

    /// A full state at a version.
    struct Checkpoint: Sendable {
        var version: UInt64
        var actionSeq: UInt64
        var state: R.State
    }

    /// One job (an effect of an action) as far as the inspector knows it.
    struct Job: Sendable {
        var effectIndex: UInt32
        /// Versions of the mutations it emitted (and of its failure hook's), in order.
        var versions: [UInt64] = []
        var lastAt: Double
        /// `done`, `failed` or `cancelled`, from the feed's job events or the journal; `failed`
        /// too when the feed carried failure-hook mutations for it.
        var outcome: String?
        /// The worker that holds or ran it, as it named itself (the feed's job events).
        var worker: String?
        /// Dispatches by the authority so far (more than 1 after a lost worker or a timeout).
        var dispatches: UInt32?
        /// Attempts on its last worker, when it failed.
        var attempts: UInt32?
        /// Authority time from the last dispatch to the worker's report, in microseconds.
        var microseconds: UInt64?
    }

    /// One action: its mutations and jobs.
    struct ActionEntry: Sendable {
        var actionSeq: UInt64
        /// When the inspector first saw the action (a mutation of it, or a heartbeat or snapshot
        /// whose last action it was), in milliseconds since the epoch.
        var firstSeenAt: Double
        var lastAt: Double
        /// Versions of its sync mutations.
        var sync: [UInt64] = []
        var jobs: [UInt32: Job] = [:]
        /// The action itself (its JSON form), when read from the journal.
        var action: MessagePackValue?
        /// Every version it applied, sync and async, ascending.
        var versions: [UInt64] {
            (sync + jobs.values.flatMap(\.versions)).sorted()
        }
    }

    /// One poll of the authority's stats.
    struct StatsSample: Sendable {
        var at: Double
        var counters: [String: UInt64]
    }

    private struct Book: Sendable {
        var current: Checkpoint?
        var checkpoints: [Checkpoint] = []
        var mutations: [Recorded] = []
        var actions: [UInt64: ActionEntry] = [:]
        var actionOrder: [UInt64] = []
        var lastActionSeq: UInt64 = 0
        var pending: [Recorded] = []
        var awaitingSnapshot = true
        var heartbeatsAhead = 0
        var generation: UInt64 = 0
        var stats: [StatsSample] = []
        var refetches: UInt64 = 0
        var malformed: UInt64 = 0
    }

    let reactor: R
    let limits: InspectorLimits
    private let book = Mutex(Book())

    init(reactor: R, limits: InspectorLimits) {
        self.reactor = reactor
        self.limits = limits
    }

    /// Milliseconds since the epoch, now.
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) * 1_000 + Double(time.tv_nsec) / 1_000_000
    }

    // MARK: Feeding

    /// Takes one mutation of the feed (or the journal). Returns `true` when the inspector must
    /// fetch a snapshot (it has none yet, or versions jumped) and was not already waiting for one.
    func receive(_ mutation: Recorded) -> Bool {
        book.withLock { book in
            guard !book.awaitingSnapshot, let current = book.current else {
                book.pending.append(mutation)
                if book.pending.count > limits.pendingMutations { book.pending.removeFirst(book.pending.count - limits.pendingMutations) }
                return false
            }
            if mutation.version <= current.version { return false }
            guard mutation.version == current.version + 1 else {
                book.awaitingSnapshot = true
                book.refetches += 1
                book.pending = [mutation]
                return true
            }
            apply(mutation, to: &book)
            book.heartbeatsAhead = 0
            return false
        }
    }

    /// Takes a heartbeat (or a feed snapshot's header): notes its last action, and returns `true`
    /// when two in a row show a version the inspector does not hold (it lost feed messages).
    func heartbeat(version: UInt64, actionSeq: UInt64) -> Bool {
        book.withLock { book in
            noteActions(through: actionSeq, at: Self.now(), in: &book)
            guard !book.awaitingSnapshot, let current = book.current else { return false }
            guard version > current.version else {
                book.heartbeatsAhead = 0
                return false
            }
            book.heartbeatsAhead += 1
            guard book.heartbeatsAhead >= 2 else { return false }
            book.heartbeatsAhead = 0
            book.awaitingSnapshot = true
            book.refetches += 1
            return true
        }
    }

    /// Installs a fetched state and applies the mutations held for it. Returns `true` when they
    /// show a gap after it (another fetch is needed).
    func install(version: UInt64, actionSeq: UInt64, state: R.State) -> Bool {
        book.withLock { book in
            if book.current == nil { book.lastActionSeq = actionSeq }
            if version > book.current?.version ?? 0 || book.current == nil {
                let checkpoint = Checkpoint(version: version, actionSeq: actionSeq, state: state)
                book.current = checkpoint
                book.checkpoints.append(checkpoint)
            }
            book.awaitingSnapshot = false
            book.heartbeatsAhead = 0
            let pending = book.pending.sorted { $0.version < $1.version }
            book.pending = []
            book.generation += 1
            for mutation in pending {
                guard let current = book.current, mutation.version > current.version else { continue }
                guard mutation.version == current.version + 1 else {
                    book.awaitingSnapshot = true
                    book.refetches += 1
                    book.pending = pending.filter { $0.version >= mutation.version }
                    return true
                }
                apply(mutation, to: &book)
            }
            trim(&book)
            return false
        }
    }

    /// Notes what the journal says about an action: the action itself.
    func noteAction(_ actionSeq: UInt64, action: MessagePackValue) {
        book.withLock { book in
            noteActions(through: actionSeq, at: Self.now(), in: &book)
            guard book.actions[actionSeq] != nil else { return }
            book.actions[actionSeq]?.action = action
            book.generation += 1
        }
    }

    /// Notes a job's end as the journal records it (`done` or `failed`).
    func noteJob(_ job: JobID, outcome: String) {
        book.withLock { book in
            guard book.actions[job.actionSeq] != nil else { return }
            let now = Self.now()
            book.actions[job.actionSeq]?.jobs[job.effectIndex, default: Job(effectIndex: job.effectIndex, lastAt: now)].outcome = outcome
            book.generation += 1
        }
    }

    /// Notes what the authority's job events say: the worker, the dispatches, the outcome and
    /// the duration.
    func noteJob(_ event: JobEvent) {
        book.withLock { book in
            let now = Self.now()
            // A job's dispatch may be the first sign of an action without sync mutations.
            noteActions(through: event.job.actionSeq, at: now, in: &book)
            guard book.actions[event.job.actionSeq] != nil else { return }
            var job = book.actions[event.job.actionSeq]?.jobs[event.job.effectIndex] ?? Job(effectIndex: event.job.effectIndex, lastAt: now)
            if let worker = event.worker { job.worker = worker }
            if event.dispatch > 0 { job.dispatches = event.dispatch }
            switch event.event {
            case .dispatched: break
            case .done, .failed, .cancelled:
                job.outcome = event.event.rawValue
                job.attempts = event.attempts ?? job.attempts
                job.microseconds = event.microseconds ?? job.microseconds
            }
            book.actions[event.job.actionSeq]?.jobs[event.job.effectIndex] = job
            book.generation += 1
        }
    }

    /// Adds one poll of the authority's stats.
    func addStats(_ counters: [String: UInt64]) {
        book.withLock { book in
            book.stats.append(StatsSample(at: Self.now(), counters: counters))
            if book.stats.count > limits.statsSamples + limits.statsSamples / 4 { book.stats.removeFirst(book.stats.count - limits.statsSamples) }
            book.generation += 1
        }
    }

    /// Counts a feed message that did not decode (dropped).
    func countMalformed() {
        book.withLock { $0.malformed += 1 }
    }

    private func apply(_ mutation: Recorded, to book: inout Book) {
        guard var current = book.current else { return }
        reactor.reduce(state: &current.state, mutation: mutation.mutation)
        current.version = mutation.version
        current.actionSeq = max(current.actionSeq, mutation.actionSeq)
        book.current = current
        book.mutations.append(mutation)
        noteActions(through: mutation.actionSeq, at: mutation.seenAt, in: &book)
        if var entry = book.actions[mutation.actionSeq] {
            entry.lastAt = mutation.seenAt
            switch mutation.origin {
            case .sync, .cancelled:
                // A cancel hook's mutations belong to the cancelling action, like its sync ones.
                entry.sync.append(mutation.version)
                // An action with more mutations than the window keeps the newest (the older
                // ones could not be shown anyway).
                if entry.sync.count > limits.versions { entry.sync.removeFirst(entry.sync.count - limits.versions) }
            case .async(let job, _), .failure(let job, _):
                var record = entry.jobs[job.effectIndex] ?? Job(effectIndex: job.effectIndex, lastAt: mutation.seenAt)
                record.versions.append(mutation.version)
                if record.versions.count > limits.versions { record.versions.removeFirst(record.versions.count - limits.versions) }
                record.lastAt = mutation.seenAt
                if case .failure = mutation.origin { record.outcome = "failed" }
                entry.jobs[job.effectIndex] = record
            }
            book.actions[mutation.actionSeq] = entry
        }
        if case .cancelled(let job, _) = mutation.origin {
            book.actions[job.actionSeq]?.jobs[job.effectIndex, default: Job(effectIndex: job.effectIndex, lastAt: mutation.seenAt)].outcome = "cancelled"
        }
        if mutation.version >= (book.checkpoints.last?.version ?? 0) + UInt64(max(1, limits.checkpointEvery)) {
            book.checkpoints.append(current)
            // Trimmed once per checkpoint: the window then holds exactly the versions from the
            // oldest checkpoint kept, at most `versions + checkpointEvery` mutations.
            trim(&book)
        }
        book.generation += 1
    }

    /// Creates entries for actions up to `actionSeq` not seen yet (at most the log's size).
    private func noteActions(through actionSeq: UInt64, at time: Double, in book: inout Book) {
        guard actionSeq > book.lastActionSeq else { return }
        let first = max(book.lastActionSeq + 1, actionSeq >= UInt64(limits.actions) ? actionSeq - UInt64(limits.actions) + 1 : 1)
        for seq in first...actionSeq {
            book.actions[seq] = ActionEntry(actionSeq: seq, firstSeenAt: time, lastAt: time)
            book.actionOrder.append(seq)
        }
        book.lastActionSeq = actionSeq
        book.generation += 1
        if book.actionOrder.count > limits.actions {
            for seq in book.actionOrder.prefix(book.actionOrder.count - limits.actions) { book.actions[seq] = nil }
            book.actionOrder.removeFirst(book.actionOrder.count - limits.actions)
        }
    }

    /// Drops checkpoints and mutations older than the window of ``InspectorLimits/versions``.
    private func trim(_ book: inout Book) {
        guard let current = book.current else { return }
        let floor = current.version > UInt64(limits.versions) ? current.version - UInt64(limits.versions) : 0
        var drop = 0
        while drop + 1 < book.checkpoints.count && book.checkpoints[drop + 1].version <= floor { drop += 1 }
        if drop > 0 { book.checkpoints.removeFirst(drop) }
        guard let oldest = book.checkpoints.first?.version else { return }
        let stale = book.mutations.prefix { $0.version <= oldest }.count
        if stale > 0 { book.mutations.removeFirst(stale) }
    }

    // MARK: Reading

    /// A summary for the page's header and the event stream.
    struct Summary: Sendable {
        var version: UInt64?
        var actionSeq: UInt64?
        var oldestVersion: UInt64?
        var generation: UInt64
        var mutationsKept: Int
        var actionsKept: Int
        var checkpointsKept: Int
        var refetches: UInt64
        var malformed: UInt64
        var awaitingSnapshot: Bool
    }

    var summary: Summary {
        book.withLock { book in
            Summary(version: book.current?.version, actionSeq: book.current?.actionSeq, oldestVersion: book.checkpoints.first?.version,
                    generation: book.generation, mutationsKept: book.mutations.count, actionsKept: book.actionOrder.count,
                    checkpointsKept: book.checkpoints.count, refetches: book.refetches, malformed: book.malformed,
                    awaitingSnapshot: book.awaitingSnapshot || book.current == nil)
        }
    }

    /// Changes with every mutation, action, job outcome and stats sample.
    var generation: UInt64 { book.withLock { $0.generation } }

    /// The live state.
    var current: Checkpoint? { book.withLock { $0.current } }

    /// The state at `version`, rebuilt from the newest checkpoint at or before it with the kept
    /// mutations; `nil` when the window does not reach it (older, newer, or in a stretch the
    /// inspector did not see).
    func state(at version: UInt64) -> Checkpoint? {
        let (start, mutations) = book.withLock { book -> (Checkpoint?, [Recorded]) in
            guard let start = book.checkpoints.last(where: { $0.version <= version }) else { return (nil, []) }
            guard version > start.version else { return (start, []) }
            let from = firstIndex(of: start.version + 1, in: book.mutations)
            return (start, Array(book.mutations[from...].prefix { $0.version <= version }))
        }
        guard var state = start else { return nil }
        for mutation in mutations {
            guard mutation.version == state.version + 1 else { return nil }
            reactor.reduce(state: &state.state, mutation: mutation.mutation)
            state.version = mutation.version
            state.actionSeq = max(state.actionSeq, mutation.actionSeq)
        }
        return state.version == version ? state : nil
    }

    /// The kept mutations at `versions` (those still in the window).
    func mutations(at versions: [UInt64]) -> [Recorded] {
        book.withLock { book in
            versions.compactMap { version in
                let index = firstIndex(of: version, in: book.mutations)
                return index < book.mutations.count && book.mutations[index].version == version ? book.mutations[index] : nil
            }
        }
    }

    /// The newest `count` actions, newest first.
    func actions(last count: Int) -> [ActionEntry] {
        book.withLock { book in book.actionOrder.suffix(count).reversed().compactMap { book.actions[$0] } }
    }

    /// One action, if still kept.
    func action(_ actionSeq: UInt64) -> ActionEntry? {
        book.withLock { $0.actions[actionSeq] }
    }

    /// The stats samples kept, oldest first.
    var stats: [StatsSample] { book.withLock { Array($0.stats.suffix(limits.statsSamples)) } }

    /// The index of the first kept mutation at or after `version` (binary search).
    private func firstIndex(of version: UInt64, in mutations: [Recorded]) -> Int {
        var low = 0
        var high = mutations.count
        while low < high {
            let middle = (low + high) / 2
            if mutations[middle].version < version { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
