/// A double-ended queue on a growable ring buffer: O(1) append, prepend and removal at the
/// front, no allocation per element, storage reused once it has grown. The dispatcher's job
/// queues and the client's waiting actions and deadlines use it.
struct Deque<Element> {
    private var storage: [Element?] = []
    private var head = 0
    private(set) var count = 0

    init() {}

    var isEmpty: Bool { count == 0 }

    var first: Element? { isEmpty ? nil : storage[head] }

    var last: Element? { isEmpty ? nil : storage[(head + count - 1) % storage.count] }

    /// The element `index` places after the first; `index` must be in `0..<count`.
    subscript(index: Int) -> Element {
        precondition(index >= 0 && index < count, "Deque index out of range")
        // Every slot in head..<head+count holds an element.
        return storage[(head + index) % storage.count]!
    }

    /// The elements from first to last.
    var elements: [Element] { (0..<count).map { storage[(head + $0) % storage.count]! } }

    mutating func append(_ element: Element) {
        growIfFull()
        storage[(head + count) % storage.count] = element
        count += 1
    }

    mutating func prepend(_ element: Element) {
        growIfFull()
        head = (head - 1 + storage.count) % storage.count
        storage[head] = element
        count += 1
    }

    mutating func popFirst() -> Element? {
        guard !isEmpty else { return nil }
        let element = storage[head]
        storage[head] = nil
        head = (head + 1) % storage.count
        count -= 1
        if count == 0 { head = 0 }
        return element
    }

    /// Removes and returns everything, first to last.
    mutating func removeAll() -> [Element] {
        defer { self = Deque() }
        return elements
    }

    private mutating func growIfFull() {
        guard count == storage.count else { return }
        var grown = [Element?](repeating: nil, count: max(8, storage.count * 2))
        for offset in 0..<count { grown[offset] = storage[(head + offset) % storage.count] }
        storage = grown
        head = 0
    }
}

extension Deque: Sendable where Element: Sendable {}
