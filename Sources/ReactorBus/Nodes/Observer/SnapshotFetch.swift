/// A snapshot an ``Observer`` is fetching: the chunks asked for and the bytes received so far.
struct SnapshotFetch {
    /// When the fetch is asked again if nothing arrives (monotonic milliseconds).
    var deadline: UInt64
    /// The request id of a whole `snapshot` request (authorities without chunks).
    var wholeRequest: UInt64?
    /// Chunk requests not answered yet: request id to offset.
    var outstanding: [UInt64: UInt64] = [:]
    /// The version being fetched, its action sequence number and size, once the first chunk came.
    var version: UInt64?
    var actionSeq: UInt64 = 0
    var total: UInt64 = 0
    /// The bytes received, in order.
    var assembled: [UInt8] = []

    /// The offset of the next chunk to ask for, or `nil` when every chunk is asked for.
    func nextOffset(chunkBytes: UInt64) -> UInt64? {
        let asked = outstanding.values.max().map { $0 + chunkBytes } ?? UInt64(assembled.count)
        let next = max(asked, UInt64(assembled.count))
        return next < total ? next : nil
    }
}
