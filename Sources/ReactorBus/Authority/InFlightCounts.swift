/// How many actions of each client still have jobs running: the authority refuses a client's
/// new action (`busy`) once it has `maxInFlightPerClient` of them.
///
/// Counted once per async action three times (the check, the action's acceptance, its last
/// job's end); the client found last is found again without hashing its id (``LastFound``), so
/// a client pipelining async actions, which always has some in flight, costs no hashing here.
struct InFlightCounts: Sendable {
    private var counts: [String: Int] = [:]
    private var lastFound = LastFound<String, Int>()

    /// Whether no client has an action in flight (then no client's id needs looking up).
    var isEmpty: Bool { counts.isEmpty }

    /// The actions of `client` in flight.
    mutating func count(of client: String) -> Int {
        lastFound.index(of: client, in: counts).map { counts.values[$0] } ?? 0
    }

    /// One more action of `client` in flight.
    mutating func add(_ client: String) {
        if let index = lastFound.index(of: client, in: counts) {
            counts.values[index] += 1
            return
        }
        lastFound.forget()
        counts[client] = 1
    }

    /// One action of `client` fewer in flight; a client with none left is dropped.
    mutating func remove(_ client: String) {
        guard let index = lastFound.index(of: client, in: counts) else { return }
        if counts.values[index] > 1 {
            counts.values[index] -= 1
            return
        }
        lastFound.forget()
        counts.remove(at: index)
    }

    /// Forgets every count.
    mutating func removeAll() {
        lastFound.forget()
        counts = [:]
    }
}
