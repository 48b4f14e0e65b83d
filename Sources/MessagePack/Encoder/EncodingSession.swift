import Foundation

/// State shared by one `encode` call, or kept by a thread for its calls without `userInfo`
/// (``ThreadKept``): options, pools of reusable buffers and nodes (so a large tree needs only as
/// many as it is deep), the keyed containers it hands out again, and a cache of type checks.
final class EncodingSession: KeptPerThread {
    /// Set per call for a session its thread keeps (``ThreadKept``).
    var sortKeys: Bool
    private let sendableUserInfo: [CodingUserInfoKey: any Sendable]
    private(set) lazy var userInfo: [CodingUserInfoKey: Any] = sendableUserInfo.mapValues { $0 }

    private var freeWriters: [MessagePackWriter] = []

    init(sortKeys: Bool, userInfo: [CodingUserInfoKey: any Sendable]) {
        self.sortKeys = sortKeys
        self.sendableUserInfo = userInfo
    }

    /// A session for calls without `userInfo`, such as the one each thread keeps.
    convenience init() {
        self.init(sortKeys: true, userInfo: [:])
    }

    /// Each thread's kept session (``ThreadKept``).
    static let keptPerThread = ThreadLocalObject<ThreadKept<EncodingSession>>()

    /// Hands the pooled buffers to the thread's pool (``ThreadWriterPool``) and releases the
    /// nodes and kept containers: at the end of an encode call with a session of its own, or when
    /// the thread that kept the session exits.
    func tearDown() {
        keptKeyed = KeptKeyedContainers<KeyedEncodingState>()
        endCall()
        freeNodes = []
    }

    /// Ends one call of a session its thread keeps (``ThreadKept``): the spare writers
    /// go to the thread's pool; the nodes, kept containers and type memos stay for the next call.
    func endCall() {
        for writer in take(&freeWriters) { ThreadWriterPool.keep(writer) }
    }

    // MARK: Headers

    /// Where the final header of a container is packed before it replaces the placeholder.
    /// Made on first use: only containers of 16 or more entries need it, and a call that encodes
    /// one small value (an action) spent a twentieth of its time making and freeing it.
    private lazy var headerWriter = MessagePackWriter()

    /// The header of a map of `count` entries, packed by msgpack-c.
    func header(mapCount count: Int) -> MessagePackWriter {
        headerWriter.reset()
        headerWriter.packMapHeader(count)
        return headerWriter
    }

    /// The header of an array of `count` elements, packed by msgpack-c.
    func header(arrayCount count: Int) -> MessagePackWriter {
        headerWriter.reset()
        headerWriter.packArrayHeader(count)
        return headerWriter
    }

    // MARK: Pools

    // The pool and the type cache change through locals (see `take`): no run-time exclusivity checks.

    func acquireWriter() -> MessagePackWriter {
        var writers = take(&freeWriters)
        defer { freeWriters = writers }
        guard let writer = writers.popLast() else { return ThreadWriterPool.acquire() }
        writer.reset()
        return writer
    }

    func releaseWriter(_ writer: MessagePackWriter) {
        var writers = take(&freeWriters)
        writers.append(writer)
        freeWriters = writers
    }

    /// Nodes whose values are complete and which nothing refers to any more.
    private var freeNodes: [EncoderNode] = []

    func makeNode(parent: EncoderNode?, key: (any CodingKey)?, target: MessagePackWriter?) -> EncoderNode {
        var nodes = take(&freeNodes)
        defer { freeNodes = nodes }
        guard let node = nodes.popLast() else { return EncoderNode(session: self, parent: parent, key: key, target: target) }
        node.reuse(parent: parent, key: key, target: target)
        return node
    }

    /// Returns `node` and its buffer to the pools unless some container or encoder still
    /// references the node (and so could still write to the buffer).
    func recycle(_ node: inout EncoderNode) {
        letGo(of: node)
        guard isKnownUniquelyReferenced(&node) else { return }
        if let writer = node.takeBuffer() { releaseWriter(writer) }
        node.clear()
        var nodes = take(&freeNodes)
        if nodes.count < 64 { nodes.append(node) }
        freeNodes = nodes
    }

    // MARK: Keyed containers

    /// Whether keyed containers are kept and handed out again (``KeyedContainerLayout``).
    private let keepsContainers = KeyedContainerLayout.encodingIsOneReference
    // Read and changed in place (not through `take`, whose moves cost retains on every value):
    // every access is one call of `keyedContainer`, `letGo` or `tearDown`, none of which runs
    // code that could reach the keeper again, so no two accesses overlap.
    @exclusivity(unchecked) private var keptKeyed = KeptKeyedContainers<KeyedEncodingState>()

    /// A keyed container writing `node`'s value into `writer`: from the second of a key type on
    /// (in this call, or in the earlier calls of a session its thread keeps), a kept one when
    /// nothing else refers to it any more, re-pointed (``keptContainer``); else a new one.
    func keyedContainer<Key: CodingKey>(_ keyType: Key.Type, node: EncoderNode, writer: MessagePackWriter) -> KeyedEncodingContainer<Key> {
        if keepsContainers {
            switch keptKeyed.lookUp(Key.self) {
            case .kept(let position): return keptContainer(Key.self, at: position, node: node, writer: writer)
            case .madeBefore: return keptContainer(Key.self, at: nil, node: node, writer: writer)
            case .first: break
            }
        }
        // The first of its key type, made as before the keeper existed: a call that encodes one
        // small value (an action) pays for no lookup more than it did.
        return KeyedEncodingContainer(KeyedEncodingContainerImpl<Key>(node: node, writer: writer))
    }

    /// The kept container of `Key` (at `position` in the keeper) re-pointed at `node` if nothing
    /// else refers to it, else a new one, kept in its place.
    @inline(never)
    private func keptContainer<Key: CodingKey>(
        _ keyType: Key.Type, at position: Int?, node: EncoderNode, writer: MessagePackWriter
    ) -> KeyedEncodingContainer<Key> {
        keptKeyed.container(
            KeyedEncodingContainer<Key>.self, at: position, for: Key.self,
            repoint: { $0.reuse(node: node, writer: writer) },
            orMake: {
                let state = KeyedEncodingState(node: node, writer: writer)
                return (KeyedEncodingContainer(KeyedEncodingContainerImpl<Key>(state: state)), state)
            },
            // The encoder's containers hold their states themselves.
            retire: { _ in })
    }

    /// Has the states of kept containers that wrote `node`'s value, and that nothing else refers
    /// to any more, let go of the node, so that it can be reused for the next value.
    @inline(__always)
    private func letGo(of node: EncoderNode) {
        guard keepsContainers else { return }
        keptKeyed.letGo(of: node)
    }

    // MARK: Type cache

    /// Types seen in this session that have no dedicated form, so the
    /// dynamic conformance check for dictionaries runs once per type rather
    /// than once per value; `PlainTypeSet.encoding` keeps them across calls.
    private var plainTypes = TypeMemo()

    /// Types seen in this session that are arrays or dictionaries, so that they skip
    /// `PlainTypeSet`'s lock after the first value.
    private var specialTypes = TypeMemo()

    @inline(__always)
    private func isKnownPlain(_ type: Any.Type) -> Bool {
        let id = ObjectIdentifier(type)
        if plainTypes.contains(id) { return true }
        if specialTypes.contains(id) { return false }
        guard PlainTypeSet.encoding.contains(type) else { return false }
        notePlain(type)
        return true
    }

    // Each memo changes through a local (see `take`), never as an `inout` argument: an in-place
    // change anywhere brings back run-time exclusivity checks on every read of it.
    private func notePlain(_ type: Any.Type) { plainTypes = take(&plainTypes).adding(type) }

    private func noteSpecial(_ type: Any.Type) { specialTypes = take(&specialTypes).adding(type) }

    // MARK: Values

    /// Appends `value` to `writer`. Primitives and the special Foundation
    /// types are packed directly; everything else goes through `encode(to:)`.
    func encodeValue<T: Encodable>(
        _ value: T, into writer: MessagePackWriter, parent: EncoderNode?, key: (any CodingKey)?
    ) throws {
        if try encodeSpecial(value, into: writer, parent: parent, key: key) { return }
        var node = makeNode(parent: parent, key: key, target: writer)
        try encodePlain(value, with: node, into: writer)
        recycle(&node)
    }

    /// Appends `value` through its `encode(to:)`, with `node` (whose target is `writer`) as encoder.
    @inline(__always)
    private func encodePlain<T: Encodable>(_ value: T, with node: EncoderNode, into writer: MessagePackWriter) throws {
        let mark = writer.count
        do {
            try value.encode(to: node)
            node.complete()
        } catch {
            letGo(of: node)
            node.releaseChildren()
            // What the failed value wrote is not a value: leave the writer as it was.
            writer.truncate(to: mark)
            throw error
        }
    }

    /// Appends the elements of an array whose header is written and whose coding path is `node`.
    ///
    /// The first element settles whether `Element` has a dedicated form; if not, the rest skip
    /// that check and share one encoder node, re-pointed at each index while nothing else holds
    /// it, instead of taking one from the pool and putting it back per element.
    func encodeElements<Element: Encodable>(_ elements: [Element], into writer: MessagePackWriter, node: EncoderNode) throws {
        guard let first = elements.first else { return }
        try encodeValue(first, into: writer, parent: node, key: MessagePackKey.index(0))
        guard elements.count > 1 else { return }
        guard isKnownPlain(Element.self) else {
            for index in 1 ..< elements.count {
                try encodeValue(elements[index], into: writer, parent: node, key: MessagePackKey.index(index))
            }
            return
        }
        var child = makeNode(parent: node, key: MessagePackKey.index(1), target: writer)
        for index in 1 ..< elements.count {
            if index > 1 {
                // The previous element's kept container, if any, lets go of the node first (as
                // `recycle` has it do for every other node).
                letGo(of: child)
                if isKnownUniquelyReferenced(&child) {
                    child.reuse(elementIndex: index)
                } else {
                    child = EncoderNode(session: self, parent: node, key: MessagePackKey.index(index), target: writer)
                }
            }
            try encodePlain(elements[index], with: child, into: writer)
        }
        recycle(&child)
    }

    /// Packs the types with a dedicated MessagePack form. Returns `false` for other types.
    private func encodeSpecial<T: Encodable>(
        _ value: T, into writer: MessagePackWriter, parent: EncoderNode?, key: (any CodingKey)?
    ) throws -> Bool {
        if T.self == String.self { writer.packString(unsafeBitCast(value, to: String.self)) }
        else if T.self == Int.self { writer.packInt(Int64(unsafeBitCast(value, to: Int.self))) }
        else if T.self == Bool.self { writer.packBool(unsafeBitCast(value, to: Bool.self)) }
        else if T.self == Double.self { writer.packDouble(unsafeBitCast(value, to: Double.self)) }
        else if T.self == Float.self { writer.packFloat(unsafeBitCast(value, to: Float.self)) }
        else if T.self == Int64.self { writer.packInt(unsafeBitCast(value, to: Int64.self)) }
        else if T.self == Int32.self { writer.packInt(Int64(unsafeBitCast(value, to: Int32.self))) }
        else if T.self == Int16.self { writer.packInt(Int64(unsafeBitCast(value, to: Int16.self))) }
        else if T.self == Int8.self { writer.packInt(Int64(unsafeBitCast(value, to: Int8.self))) }
        else if T.self == UInt.self { writer.packUInt(UInt64(unsafeBitCast(value, to: UInt.self))) }
        else if T.self == UInt64.self { writer.packUInt(unsafeBitCast(value, to: UInt64.self)) }
        else if T.self == UInt32.self { writer.packUInt(UInt64(unsafeBitCast(value, to: UInt32.self))) }
        else if T.self == UInt16.self { writer.packUInt(UInt64(unsafeBitCast(value, to: UInt16.self))) }
        else if T.self == UInt8.self { writer.packUInt(UInt64(unsafeBitCast(value, to: UInt8.self))) }
        else if T.self == [UInt8].self { writer.packBinary(unsafeBitCast(value, to: [UInt8].self)) }
        else if T.self == Data.self { (value as? Data).map { data in data.withUnsafeBytes { writer.packBinary($0) } } }
        else if T.self == Date.self {
            guard let date = value as? Date else { return false }
            try Self.packDate(date, into: writer, path: { self.path(parent, key) })
        }
        else if T.self == UUID.self {
            guard let uuid = value as? UUID else { return false }
            withUnsafeBytes(of: uuid.uuid) { writer.packBinary($0) }
        }
        else if T.self == MessagePackValue.self {
            guard let packValue = value as? MessagePackValue else { return false }
            packValue.pack(into: writer)
        }
        else if isKnownPlain(T.self) { return false }
        else if let array = value as? any EncodableArray {
            noteSpecial(T.self)
            try array.encodeMessagePackArray(session: self, writer: writer, parent: parent, key: key)
        }
        else if let dictionary = value as? any EncodableDictionary {
            noteSpecial(T.self)
            return try dictionary.encodeMessagePackMap(session: self, writer: writer, parent: parent, key: key)
        }
        else {
            PlainTypeSet.encoding.insert(T.self)
            notePlain(T.self)
            return false
        }
        return true
    }

    /// `Date` as a msgpack timestamp: whole seconds since 1970 (rounded
    /// towards negative infinity) plus nanoseconds.
    static func packDate(_ date: Date, into writer: MessagePackWriter, path: () -> [any CodingKey]) throws {
        let interval = date.timeIntervalSince1970
        let whole = interval.rounded(.down)
        var nanoseconds = ((interval - whole) * 1e9).rounded()
        var seconds = whole
        if nanoseconds >= 1e9 {
            nanoseconds -= 1e9
            seconds += 1
        }
        guard let secondsValue = Int64(exactly: seconds), let nanosValue = UInt32(exactly: nanoseconds) else {
            throw EncodingError.invalidValue(date, .init(
                codingPath: path(), debugDescription: "Date \(interval) is outside the msgpack timestamp range."))
        }
        writer.packTimestamp(seconds: secondsValue, nanoseconds: nanosValue)
    }

    func path(_ parent: EncoderNode?, _ key: (any CodingKey)?) -> [any CodingKey] {
        let base = parent?.codingPath ?? []
        return key.map { base + [$0] } ?? base
    }
}
