import ReactorCore

/// The jobs a worker holds beyond those it runs (its prefetch), oldest first: a slot that frees
/// takes the oldest at once, without a round trip to the authority.
///
/// Taking a job out of the middle (the authority cancelled it, or sent it again) costs no scan:
/// the order keeps tickets, and a ticket whose job left the queue is skipped when it reaches
/// the front. So a queue of thousands costs the same per job as a queue of one.
struct WorkerJobQueue {
    private var order = Deque<Ticket>()
    private var waiting: [JobID: Waiting] = [:]
    private var nextTicket: UInt64 = 0

    private struct Ticket {
        let job: JobID
        let number: UInt64
    }

    private struct Waiting {
        let ticket: UInt64
        let entry: WorkerQueuedJob
    }

    /// Jobs waiting.
    var count: Int { waiting.count }

    var isEmpty: Bool { waiting.isEmpty }

    /// Entries in the order, skipped ones included (for tests of its bound).
    var bookkeepingCount: Int { order.count }

    /// Whether `job` is waiting.
    func contains(_ job: JobID) -> Bool { waiting[job] != nil }

    /// Adds a job at the back; a job already waiting moves to the back with its new payload.
    mutating func append(_ entry: WorkerQueuedJob) {
        nextTicket &+= 1
        waiting[entry.job] = Waiting(ticket: nextTicket, entry: entry)
        order.append(Ticket(job: entry.job, number: nextTicket))
        compactIfStale()
    }

    /// Takes `job` out; whether it was waiting.
    @discardableResult
    mutating func remove(_ job: JobID) -> Bool {
        guard waiting.removeValue(forKey: job) != nil else { return false }
        compactIfStale()
        return true
    }

    /// Takes the oldest waiting job.
    mutating func popFirst() -> WorkerQueuedJob? {
        while let ticket = order.popFirst() {
            if let waiting = waiting[ticket.job], waiting.ticket == ticket.number {
                self.waiting[ticket.job] = nil
                return waiting.entry
            }
        }
        return nil
    }

    /// Forgets every waiting job; how many there were.
    @discardableResult
    mutating func removeAll() -> Int {
        defer { self = WorkerJobQueue() }
        return waiting.count
    }

    /// Keeps the order's skipped tickets (of jobs taken out of the middle) from outgrowing the
    /// jobs still waiting, when jobs are cancelled while no slot frees to pop them.
    private mutating func compactIfStale() {
        guard order.count > 2 * waiting.count + 64 else { return }
        var kept = Deque<Ticket>()
        while let ticket = order.popFirst() {
            if waiting[ticket.job]?.ticket == ticket.number { kept.append(ticket) }
        }
        order = kept
    }
}
