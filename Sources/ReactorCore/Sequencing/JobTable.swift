/// Values by open job, for the job ledger: each action's first job (effect index 0, the only
/// one of nearly every action with effects) in a ``SequenceWindow`` by action sequence number,
/// the other jobs in a dictionary.
///
/// Why: the ledger holds every open job of a backlog (150,000 and more while workers catch
/// up), and each event of a job read or wrote it in a hash table, a random bucket and a cache
/// miss or three each time. Jobs are opened in sequence order and mostly end in about that
/// order, so in the window opening a job writes next to the previous one and closing the
/// oldest moves the window's start.
@usableFromInline
struct JobTable<Value> {
    @usableFromInline var firsts = SequenceWindow<Value>()
    @usableFromInline var others: [JobID: Value] = [:]

    @inlinable init() {}

    /// Jobs held.
    @inlinable var count: Int { firsts.count + others.count }

    /// The value for job `id`; setting `nil` removes it.
    @inlinable
    subscript(id: JobID) -> Value? {
        get { id.effectIndex == 0 ? firsts[id.actionSeq] : others[id] }
        set {
            if let newValue {
                if id.effectIndex == 0 { firsts.insert(newValue, for: id.actionSeq) } else { others[id] = newValue }
            } else {
                removeValue(forKey: id)
            }
        }
    }

    /// Removes and returns the value for job `id`, if held.
    @inlinable @discardableResult
    mutating func removeValue(forKey id: JobID) -> Value? {
        id.effectIndex == 0 ? firsts.removeValue(for: id.actionSeq) : others.removeValue(forKey: id)
    }

    /// Runs `body` on job `id`'s value in place (one lookup); `nil` when none is held.
    @inlinable
    mutating func update<T>(_ id: JobID, _ body: (inout Value) throws -> T) rethrows -> T? {
        if id.effectIndex == 0 { return try firsts.update(id.actionSeq, body) }
        guard let index = others.index(forKey: id) else { return nil }
        return try body(&others.values[index])
    }

    /// Calls `body` with every job and its value, in no particular order.
    func forEach(_ body: (JobID, Value) throws -> Void) rethrows {
        try firsts.forEach { try body(JobID(actionSeq: $0, effectIndex: 0), $1) }
        for (id, value) in others { try body(id, value) }
    }
}

extension JobTable: Sendable where Value: Sendable {}
