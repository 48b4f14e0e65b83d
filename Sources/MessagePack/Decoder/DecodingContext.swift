import Foundation

/// State shared by one `decode` call, or kept by a thread for its calls without `userInfo`
/// (``ThreadKept``).
final class DecodingContext: KeptPerThread {
    let userInfo: [CodingUserInfoKey: Any]

    init(userInfo: [CodingUserInfoKey: any Sendable]) {
        self.userInfo = userInfo.isEmpty ? [:] : userInfo.mapValues { $0 }
    }

    /// A context for calls without `userInfo`, such as the one each thread keeps.
    convenience init() {
        self.init(userInfo: [:])
    }

    /// Each thread's kept context (``ThreadKept``).
    static let keptPerThread = ThreadLocalObject<ThreadKept<DecodingContext>>()

    /// Decodes a `T` from `object`, found under `key` in the container at `parent`.
    /// Primitives and the special Foundation types are read directly;
    /// everything else goes through `init(from:)`.
    func decodeValue<T: Decodable>(
        _ type: T.Type, from object: ObjectRef, parent: CodingPathNode?, key: (any CodingKey)?
    ) throws -> T {
        if !isPlain(T.self) {
            // Each form returns `T` itself: a `T?` would cost a run-time lookup of `Optional<T>`'s
            // metadata per value.
            if T.self == String.self {
                return unsafeBitCast(try object.decodeString { CodingPathNode.path(parent, appendingOptional: key) }, to: T.self)
            }
            if let kind = NumberKind(T.self) { return try decodeNumber(kind, as: T.self, from: object, parent: parent, key: key) }
            return try decodeSpecial(T.self, from: object, parent: parent, key: key)
        }
        guard let key else { return try decodePlain(T.self, from: object, path: parent) }
        var node = makePathNode(parent: parent, key: key)
        defer { recycle(&node) }
        return try decodePlain(T.self, from: object, path: node)
    }

    /// The elements of `array` (an array object), whose coding path is `node`.
    ///
    /// Whether `Element` has a dedicated form is settled once per array instead of once per
    /// element, and the elements of a type decoded through `init(from:)` share one coding path
    /// link, re-pointed at each index while nothing else holds it. The elements are written
    /// straight into the new array's storage: `append` in this unspecialised code checks
    /// uniqueness and capacity through several generic calls per element.
    func decodeElements<Element: Decodable>(_ type: Element.Type, of array: ObjectRef, node: CodingPathNode?) throws -> [Element] {
        let count = array.arrayCount
        guard isPlain(Element.self) else {
            return try [Element](unsafeUninitializedCapacity: count) { buffer, initialized in
                for index in 0 ..< count {
                    buffer.initializeElement(at: index, to: try decodeValue(
                        Element.self, from: array.element(index), parent: node, key: MessagePackKey.index(index)))
                    initialized += 1
                }
            }
        }
        var link = makePathNode(parent: node, key: MessagePackKey.index(0))
        defer { recycle(&link) }
        return try [Element](unsafeUninitializedCapacity: count) { buffer, initialized in
            for index in 0 ..< count {
                if index > 0 {
                    if isKnownUniquelyReferenced(&link) {
                        link.reuse(elementIndex: index)
                    } else {
                        link = CodingPathNode(parent: node, key: MessagePackKey.index(index))
                    }
                }
                buffer.initializeElement(at: index, to: try decodePlain(Element.self, from: array.element(index), path: link))
                initialized += 1
            }
        }
    }

    /// Decodes a `T` through its `init(from:)`.
    @inline(__always)
    private func decodePlain<T: Decodable>(_ type: T.Type, from object: ObjectRef, path: CodingPathNode?) throws -> T {
        do {
            let value = try T(from: DecoderImpl(object: object, context: self, path: path))
            letGo(of: path)
            return value
        } catch DecodingError.typeMismatch(let type, let context) where isAboutAnUnknownKey(context, at: path) {
            throw namingTheCases(type, context)
        }
    }

    // MARK: Reused coding path links

    /// Links of values already decoded that nothing referred to any more: allocating and freeing
    /// one per value cost a tenth of decoding a small struct.
    private var freePathNodes: [CodingPathNode] = []

    @inline(__always)
    private func makePathNode(parent: CodingPathNode?, key: any CodingKey) -> CodingPathNode {
        // Through a local (see `take`): no run-time exclusivity checks on the pool.
        var free = take(&freePathNodes)
        defer { freePathNodes = free }
        guard let node = free.popLast() else { return CodingPathNode(parent: parent, key: key) }
        node.reuse(parent: parent, key: key)
        return node
    }

    /// Keeps `node` for reuse unless something (a container, a decoder, an error's context, a
    /// child link) still refers to it.
    @inline(__always)
    private func recycle(_ node: inout CodingPathNode) {
        guard isKnownUniquelyReferenced(&node) else { return }
        node.clear()
        var free = take(&freePathNodes)
        if free.count < 64 { free.append(node) }
        freePathNodes = free
    }

    /// Releases the reusable coding path links and kept containers (whose states refer back to
    /// this context): at the end of a call with a context of its own, or when the thread that
    /// kept the context exits.
    func tearDown() {
        freePathNodes = []
        keptKeyed = KeptKeyedContainers<KeyedDecodingState>()
        endCall()
    }

    /// Ends one call of a context its thread keeps: forgets that call's unknown enum case; the
    /// links, kept containers and type memos stay for the next call.
    func endCall() {
        unknownKey = nil
        callStates.removeAll(keepingCapacity: true)
    }

    /// Every keyed container state made in this call, and every kept one the keeper replaced in
    /// it. A container refers to its state unretained (see
    /// `KeyedDecodingContainerImpl.unretainedState`), so something else must keep the state alive
    /// for as long as the container can be used: the keeper keeps only some, and replaces them;
    /// this list keeps the others until the call ends.
    private var callStates: [KeyedDecodingState] = []

    // MARK: Keyed containers

    /// Whether keyed containers are kept and handed out again (``KeyedContainerLayout``).
    private let keepsContainers = KeyedContainerLayout.isOneReference
    // Read and changed in place (not through `take`, whose moves cost retains on every value):
    // every access is one call of `keyedContainer`, `letGo` or `tearDown`, none of which runs
    // code that could reach the keeper again, so no two accesses overlap.
    @exclusivity(unchecked) private var keptKeyed = KeptKeyedContainers<KeyedDecodingState>()

    /// A keyed container reading `map`: from the second of a key type on (in this call, or in the
    /// earlier calls of a context its thread keeps), a kept one when nothing else refers to it any
    /// more, re-pointed (``keptContainer``); else a new one. Every state made here lives until the
    /// call ends (`callStates`).
    func keyedContainer<Key: CodingKey>(_ keyType: Key.Type, map: ObjectRef, path: CodingPathNode?) throws -> KeyedDecodingContainer<Key> {
        let index = try KeyedDecodingState.validate(map: map, keyType: Key.self, path: path)
        if keepsContainers {
            switch keptKeyed.lookUp(Key.self) {
            case .kept(let position): return keptContainer(Key.self, at: position, map: map, path: path, index: index)
            case .madeBefore: return keptContainer(Key.self, at: nil, map: map, path: path, index: index)
            case .first: break
            }
        }
        // The first of its key type, made as before the keeper existed: in this shape the
        // standard library's initialiser is inlined, and a call that decodes one small value
        // (an action) pays for no lookup more than it did.
        let state = KeyedDecodingState(context: self, map: map, path: path, index: index)
        callStates.append(state)
        return KeyedDecodingContainer(KeyedDecodingContainerImpl<Key>(state: state))
    }

    /// The kept container of `Key` (at `position` in the keeper) re-pointed at `map` if nothing
    /// else refers to it, else a new one, kept in its place.
    @inline(never)
    private func keptContainer<Key: CodingKey>(
        _ keyType: Key.Type, at position: Int?, map: ObjectRef, path: CodingPathNode?, index: MapKeyIndex?
    ) -> KeyedDecodingContainer<Key> {
        keptKeyed.container(
            KeyedDecodingContainer<Key>.self, at: position, for: Key.self,
            repoint: { $0.reuse(map: map, path: path, index: index) },
            orMake: {
                let state = KeyedDecodingState(context: self, map: map, path: path, index: index)
                callStates.append(state)
                return (KeyedDecodingContainer(KeyedDecodingContainerImpl<Key>(state: state)), state)
            },
            // Handed out in an earlier call perhaps (so not in `callStates`), and still in use.
            retire: { callStates.append($0) })
    }

    /// Has the states of kept containers that the value at `path` had, and nothing else has any
    /// more, let go of its link, so that the link can be reused.
    @inline(__always)
    private func letGo(of path: CodingPathNode?) {
        guard keepsContainers, let path else { return }
        keptKeyed.letGo(of: path)
    }

    // MARK: Unknown enum cases

    /// The one key of the map whose `allKeys` was asked for last, when the container's key type
    /// did not accept it: an enum's unknown case, if an error about that container follows.
    private var unknownKey: (name: String, keyType: any CodingKey.Type, path: CodingPathNode?)?

    /// Called by every keyed container's `allKeys`: `name` is its map's only key when the key
    /// type refused it, else `nil`.
    @inline(__always)
    func noteKeys(_ name: String?, of keyType: any CodingKey.Type, at path: CodingPathNode?) {
        if let name {
            unknownKey = (name, keyType, path)
        } else if unknownKey != nil {
            unknownKey = nil
        }
    }

    /// What Swift's synthesized decoding of an enum throws when the map's keys name no case.
    static let synthesizedEnumMismatch = "Invalid number of keys found, expected one."

    /// Whether an error thrown for the value at `node` is Swift's synthesized enum decoding
    /// refusing that value's own map (not one nested in it) whose one key it did not accept.
    private func isAboutAnUnknownKey(_ context: DecodingError.Context, at node: CodingPathNode?) -> Bool {
        guard let unknownKey, unknownKey.path === node, context.debugDescription == Self.synthesizedEnumMismatch else { return false }
        return context.codingPath.count == CodingPathNode.path(node).count
    }

    /// The error Swift's synthesized enum decoding threw for a map with an unknown key, as one
    /// that names the key and the enum's cases.
    private func namingTheCases(_ type: Any.Type, _ context: DecodingError.Context) -> DecodingError {
        guard let (name, keyType, _) = unknownKey else { return .typeMismatch(type, context) }
        unknownKey = nil
        // The keys are the synthesized `CodingKeys` of the enum's cases, so there is at least
        // one (an enum without cases has no synthesized `Decodable`).
        func cases<Key: CodingKey>(_ keyType: Key.Type) -> [String]? { CodingKeyCases.names(of: keyType, isInhabited: true) }
        let unknown = UnknownEnumCase(name: name, knownCases: cases(keyType) ?? [])
        return .typeMismatch(type, .init(codingPath: context.codingPath, debugDescription: unknown.sentence, underlyingError: unknown))
    }

    /// Types seen in this decode call that have no dedicated form, so the
    /// dynamic conformance check for dictionaries runs once per type rather
    /// than once per value; `PlainTypeSet.decoding` keeps them across calls.
    private var plainTypes = TypeMemo()

    /// Types seen in this decode call that have a dedicated form found by a conformance check
    /// (arrays, dictionaries), so that they skip `PlainTypeSet`'s lock after the first value.
    private var specialTypes = TypeMemo()

    /// Whether `type` is decoded through its `init(from:)` alone (no dedicated form).
    @inline(__always)
    private func isPlain(_ type: Any.Type) -> Bool {
        let id = ObjectIdentifier(type)
        if plainTypes.contains(id) { return true }
        if type == String.self || NumberKind(type) != nil { return false }
        if specialTypes.contains(id) { return false }
        if PlainTypeSet.decoding.contains(type) {
            notePlain(type)
            return true
        }
        if isSpecial(type) {
            noteSpecial(type)
            return false
        }
        PlainTypeSet.decoding.insert(type)
        notePlain(type)
        return true
    }

    // Each memo changes through a local (see `take`), never as an `inout` argument: an in-place
    // change anywhere brings back run-time exclusivity checks on every read of it.
    private func notePlain(_ type: Any.Type) { plainTypes = take(&plainTypes).adding(type) }

    private func noteSpecial(_ type: Any.Type) { specialTypes = take(&specialTypes).adding(type) }

    /// Whether `type` has a dedicated form other than `String` and the numbers.
    private func isSpecial(_ type: Any.Type) -> Bool {
        type == [UInt8].self || type == Data.self || type == Date.self || type == UUID.self
            || type == MessagePackValue.self || type is any DecodableArray.Type
            || (type as? any DecodableDictionary.Type).map { $0.hasDedicatedForm } == true
    }

    /// The types `isSpecial` accepts.
    private func decodeSpecial<T: Decodable>(
        _ type: T.Type, from object: ObjectRef, parent: CodingPathNode?, key: (any CodingKey)?
    ) throws -> T {
        let path = { CodingPathNode.path(parent, appendingOptional: key) }
        if T.self == [UInt8].self { return unsafeBitCast(try object.decodeBytes(path), to: T.self) }
        if T.self == Data.self { return unsafeBitCast(Data(try object.decodeBytes(path)), to: T.self) }
        if T.self == Date.self { return unsafeBitCast(try decodeDate(object, path), to: T.self) }
        if T.self == UUID.self { return unsafeBitCast(try decodeUUID(object, path), to: T.self) }
        if T.self == MessagePackValue.self { return unsafeBitCast(try MessagePackValue(object: object, path: path), to: T.self) }
        let node = key.map { CodingPathNode(parent: parent, key: $0) } ?? parent
        if let arrayType = T.self as? any DecodableArray.Type {
            func decode<A: DecodableArray>(_ arrayType: A.Type) throws -> T {
                unsafeBitCast(try A.decodeMessagePackArray(from: object, context: self, node: node), to: T.self)
            }
            return try decode(arrayType)
        }
        guard let dictionaryType = T.self as? any DecodableDictionary.Type else {
            preconditionFailure("isSpecial accepted \(T.self)")
        }
        func decode<D: DecodableDictionary>(_ dictionaryType: D.Type) throws -> T {
            guard let dictionary = try D.decodeMessagePackMap(from: object, context: self, node: node) else {
                preconditionFailure("\(D.self) has a dedicated form")
            }
            return unsafeBitCast(dictionary, to: T.self)
        }
        return try decode(dictionaryType)
    }

    /// The numeric types and `Bool`.
    enum NumberKind {
        case int, bool, double, float, int64, int32, int16, int8, uint, uint64, uint32, uint16, uint8

        @inline(__always)
        init?(_ type: Any.Type) {
            if type == Int.self { self = .int }
            else if type == Bool.self { self = .bool }
            else if type == Double.self { self = .double }
            else if type == Float.self { self = .float }
            else if type == Int64.self { self = .int64 }
            else if type == Int32.self { self = .int32 }
            else if type == Int16.self { self = .int16 }
            else if type == Int8.self { self = .int8 }
            else if type == UInt.self { self = .uint }
            else if type == UInt64.self { self = .uint64 }
            else if type == UInt32.self { self = .uint32 }
            else if type == UInt16.self { self = .uint16 }
            else if type == UInt8.self { self = .uint8 }
            else { return nil }
        }
    }

    /// Bool and the numeric types, read directly; `T` is the type `kind` was made from.
    @inline(__always)
    private func decodeNumber<T: Decodable>(
        _ kind: NumberKind, as type: T.Type, from object: ObjectRef, parent: CodingPathNode?, key: (any CodingKey)?
    ) throws -> T {
        func path() -> [any CodingKey] { CodingPathNode.path(parent, appendingOptional: key) }
        switch kind {
        case .int: return unsafeBitCast(try object.decodeInteger(Int.self, path), to: T.self)
        case .bool: return unsafeBitCast(try object.decodeBool(path), to: T.self)
        case .double: return unsafeBitCast(try object.decodeDouble(path), to: T.self)
        case .float: return unsafeBitCast(try object.decodeFloat(path), to: T.self)
        case .int64: return unsafeBitCast(try object.decodeInteger(Int64.self, path), to: T.self)
        case .int32: return unsafeBitCast(try object.decodeInteger(Int32.self, path), to: T.self)
        case .int16: return unsafeBitCast(try object.decodeInteger(Int16.self, path), to: T.self)
        case .int8: return unsafeBitCast(try object.decodeInteger(Int8.self, path), to: T.self)
        case .uint: return unsafeBitCast(try object.decodeInteger(UInt.self, path), to: T.self)
        case .uint64: return unsafeBitCast(try object.decodeInteger(UInt64.self, path), to: T.self)
        case .uint32: return unsafeBitCast(try object.decodeInteger(UInt32.self, path), to: T.self)
        case .uint16: return unsafeBitCast(try object.decodeInteger(UInt16.self, path), to: T.self)
        case .uint8: return unsafeBitCast(try object.decodeInteger(UInt8.self, path), to: T.self)
        }
    }

    private func decodeDate(_ object: ObjectRef, _ path: ObjectRef.Path) throws -> Date {
        let time = try object.decodeTimestamp(as: Date.self, path)
        let interval = Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        // Seconds within about 512 of Int64.max round up to 2^63 as a Double: a Date no timestamp
        // holds, which the encoder refuses. Refused here, so that every Date decoded encodes
        // again (a state holding one could not be snapshotted or published).
        guard interval < 0x1p63 else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: path(),
                debugDescription: "Timestamp of \(time.tv_sec) seconds is past the last Date that encodes again as a timestamp."))
        }
        return Date(timeIntervalSince1970: interval)
    }

    /// A 16-byte bin (what the encoder writes) or the canonical string form.
    private func decodeUUID(_ object: ObjectRef, _ path: ObjectRef.Path) throws -> UUID {
        if object.isString {
            guard let uuid = UUID(uuidString: try object.decodeString(path)) else {
                throw DecodingError.dataCorrupted(.init(codingPath: path(), debugDescription: "Not a UUID string."))
            }
            return uuid
        }
        let bytes = try object.decodeBytes(path)
        guard bytes.count == 16 else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: path(), debugDescription: "A UUID needs 16 bytes, found \(bytes.count)."))
        }
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}

extension CodingPathNode {
    static func path(_ node: CodingPathNode?, appendingOptional key: (any CodingKey)?) -> [any CodingKey] {
        guard let key else { return path(node) }
        return path(node, appending: key)
    }
}
