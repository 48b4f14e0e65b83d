import MessagePack

/// The body frame of a batched message (`jobs`, `reports`, replication's packed `records`): one
/// MessagePack array whose elements are read by msgpack-c in place, all or nothing.
package enum WireBody {
    /// The elements of the array in `frame` (exactly `count` of them, when given), each made by
    /// `element`; a frame that is not exactly such an array, or an element `element` refuses
    /// (`nil`), is `malformed`, naming `what` the body holds and the `shape` each element must have.
    package static func elements<T>(of frame: [UInt8], count: UInt64? = nil, what: String, shape: String,
                                    _ element: (MessagePackView) -> T?) throws(ProtocolError) -> [T] {
        var elements: [T] = []
        try read(frame, count: count, what: what, shape: shape, into: &elements, element)
        return elements
    }

    /// The same, into `elements` (emptied first, its storage kept): a reader of many large
    /// batches reuses one array, where a new one per batch was a large allocation each time,
    /// which made glibc consolidate its free lists of small blocks every time.
    /// On a malformed frame `elements` is left empty.
    package static func read<T>(_ frame: [UInt8], count: UInt64? = nil, what: String, shape: String, into elements: inout [T],
                                _ element: (MessagePackView) -> T?) throws(ProtocolError) {
        elements.removeAll(keepingCapacity: true)
        var problem = "the \(what) body is not MessagePack"
        let complete = (try? MessagePackView.read(frame) { root -> Bool in
            guard let found = root.arrayCount, count.map({ UInt64(found) == $0 }) ?? true else {
                problem = "the \(what) body must be an array" + (count.map { " of \($0)" } ?? "")
                return false
            }
            elements.reserveCapacity(found)
            for index in 0..<found {
                guard let value = element(root.element(at: index)) else {
                    problem = "element \(index) of the \(what) body must be \(shape)"
                    return false
                }
                elements.append(value)
            }
            return true
        }) ?? false
        guard complete else {
            elements.removeAll(keepingCapacity: true)
            throw .malformed(problem)
        }
    }
}
