import MessagePack

/// The body frame of a batched message (`jobs`, `reports`, replication's packed `records`): one
/// MessagePack array whose elements are read by msgpack-c in place, all or nothing.
package enum WireBody {
    /// The elements of the array in `frame` (exactly `count` of them, when given), each made by
    /// `element`; a frame that is not exactly such an array, or an element `element` refuses
    /// (`nil`), is `malformed`, naming `what` the body holds and the `shape` each element must have.
    package static func elements<T>(of frame: [UInt8], count: UInt64? = nil, what: String, shape: String,
                                    _ element: (MessagePackView) -> T?) throws(ProtocolError) -> [T] {
        var problem = "the \(what) body is not MessagePack"
        let elements = try? MessagePackView.read(frame) { root -> [T]? in
            guard let found = root.arrayCount, count.map({ UInt64(found) == $0 }) ?? true else {
                problem = "the \(what) body must be an array" + (count.map { " of \($0)" } ?? "")
                return nil
            }
            var elements: [T] = []
            elements.reserveCapacity(found)
            for index in 0..<found {
                guard let value = element(root.element(at: index)) else {
                    problem = "element \(index) of the \(what) body must be \(shape)"
                    return nil
                }
                elements.append(value)
            }
            return elements
        }
        guard let elements else { throw .malformed(problem) }
        return elements
    }
}
