/// A set bounded by forgetting what was not used for longest: it holds the elements inserted or
/// found since it last filled ``capacity``, plus those of the round before, so at most twice
/// the capacity, and an element used in each round stays.
///
/// Why: the authority remembers which client connections read batched acks, and a connection
/// tells it when it starts but never when it ends; without a bound, departed clients would cost
/// memory forever. A forgotten client is only served the unbatched replies every client reads.
struct RecentSet<Element: Hashable> {
    /// Elements per round.
    let capacity: Int
    private var current: Set<Element> = []
    private var previous: Set<Element> = []
    /// The element last found, checked before hashing: a client's acks come in runs.
    private var lastFound: Element?

    /// An empty set that keeps at least the last `capacity` (at least 1) elements used.
    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Whether nothing is remembered.
    var isEmpty: Bool { current.isEmpty && previous.isEmpty }

    /// How many elements are remembered.
    var count: Int { current.count + previous.count }

    /// Remembers `element`.
    mutating func insert(_ element: Element) {
        if current.count >= capacity {
            previous = current
            current = []
            lastFound = nil
        }
        current.insert(element)
    }

    /// Whether `element` is remembered; finding it counts as a use.
    mutating func contains(_ element: Element) -> Bool {
        if let lastFound, lastFound == element { return true }
        if current.contains(element) {
            lastFound = element
            return true
        }
        guard previous.remove(element) != nil else { return false }
        insert(element)
        lastFound = element
        return true
    }

    /// Forgets `element`.
    mutating func remove(_ element: Element) {
        current.remove(element)
        previous.remove(element)
        if lastFound == element { lastFound = nil }
    }
}
