/// A double-ended queue on a growable ring buffer: O(1) append, prepend and removal at the
/// front, no allocation per element, storage reused once it has grown. The dispatcher's job
/// queues and the client's waiting actions and deadlines use it.
///
/// The ring's length is a power of two, so a slot is an AND away (a division per access was
/// visible with a backlog moving through the dispatcher), and the first element leaves by being
/// moved out, not copied and then released.
struct Deque<Element> {
    private var storage: [Element?] = []
    private var head = 0
    private(set) var count = 0

    init() {}

    var isEmpty: Bool { count == 0 }

    var first: Element? { isEmpty ? nil : storage[head] }

    var last: Element? { isEmpty ? nil : storage[slot(count - 1)] }

    /// The element `index` places after the first; `index` must be in `0..<count`.
    subscript(index: Int) -> Element {
        precondition(index >= 0 && index < count, "Deque index out of range")
        // Every slot in head..<head+count holds an element.
        return storage[slot(index)]!
    }

    /// The elements from first to last.
    var elements: [Element] { (0..<count).map { storage[slot($0)]! } }

    mutating func append(_ element: Element) {
        growIfFull()
        storage[slot(count)] = element
        count += 1
    }

    mutating func prepend(_ element: Element) {
        growIfFull()
        head = (head - 1) & (storage.count - 1)
        storage[head] = element
        count += 1
    }

    mutating func popFirst() -> Element? {
        guard !isEmpty else { return nil }
        let element = storage[head].take()
        head = (head + 1) & (storage.count - 1)
        count -= 1
        if count == 0 { head = 0 }
        return element
    }

    /// Removes and returns everything, first to last.
    mutating func removeAll() -> [Element] {
        defer { self = Deque() }
        return elements
    }

    /// The storage index of the element `offset` places after the first.
    private func slot(_ offset: Int) -> Int { (head + offset) & (storage.count - 1) }

    private mutating func growIfFull() {
        guard count == storage.count else { return }
        var grown = [Element?](repeating: nil, count: max(8, storage.count * 2))
        for offset in 0..<count { grown[offset] = storage[slot(offset)].take() }
        storage = grown
        head = 0
    }
}

extension Deque: Sendable where Element: Sendable {}
