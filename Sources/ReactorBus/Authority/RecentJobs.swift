import ReactorCore

/// The most recent `limit` job identities inserted, forgetting the oldest first: a bounded
/// memory of cancelled jobs whose workers may still report, so their late reports are counted
/// apart from other foreign ones.
struct RecentJobs: Sendable {
    let limit: Int
    private var members: Set<JobID> = []
    private var order = Deque<JobID>()

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    func contains(_ job: JobID) -> Bool { members.contains(job) }

    mutating func insert(_ job: JobID) {
        guard members.insert(job).inserted else { return }
        order.append(job)
        if order.count > limit, let oldest = order.popFirst() { members.remove(oldest) }
    }
}
