import Foundation

/// State shared by one `decode` call.
final class DecodingContext {
    let userInfo: [CodingUserInfoKey: Any]

    init(userInfo: [CodingUserInfoKey: any Sendable]) {
        self.userInfo = userInfo.isEmpty ? [:] : userInfo.mapValues { $0 }
    }

    /// Decodes a `T` from `object`, found under `key` in the container at `parent`.
    /// Primitives and the special Foundation types are read directly;
    /// everything else goes through `init(from:)`.
    func decodeValue<T: Decodable>(
        _ type: T.Type, from object: ObjectRef, parent: CodingPathNode?, key: (any CodingKey)?
    ) throws -> T {
        if let value = try decodeSpecial(T.self, from: object, parent: parent, key: key) { return value }
        let node = key.map { CodingPathNode(parent: parent, key: $0) } ?? parent
        do {
            return try T(from: DecoderImpl(object: object, context: self, path: node))
        } catch DecodingError.typeMismatch(let type, let context) where isAboutAnUnknownKey(context, at: node) {
            throw namingTheCases(type, context)
        }
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
    /// than once per value.
    private var plainTypes: [ObjectIdentifier] = []

    @inline(__always)
    private func isKnownPlain(_ type: Any.Type) -> Bool {
        let id = ObjectIdentifier(type)
        for known in plainTypes where known == id { return true }
        return false
    }

    private func decodeSpecial<T: Decodable>(
        _ type: T.Type, from object: ObjectRef, parent: CodingPathNode?, key: (any CodingKey)?
    ) throws -> T? {
        if isKnownPlain(T.self) { return nil }
        if T.self == String.self {
            return unsafeBitCast(try object.decodeString { CodingPathNode.path(parent, appendingOptional: key) }, to: T.self)
        }
        if let value = try decodeNumber(T.self, from: object, parent: parent, key: key) { return value }
        let path = { CodingPathNode.path(parent, appendingOptional: key) }
        if T.self == [UInt8].self { return unsafeBitCast(try object.decodeBytes(path), to: T.self) }
        if T.self == Data.self { return Data(try object.decodeBytes(path)) as? T }
        if T.self == Date.self { return try decodeDate(object, path) as? T }
        if T.self == UUID.self { return try decodeUUID(object, path) as? T }
        if T.self == MessagePackValue.self { return try MessagePackValue(object: object, path: path) as? T }
        if let arrayType = T.self as? any DecodableArray.Type {
            return try arrayType.decodeMessagePackArray(
                from: object, context: self, node: key.map { CodingPathNode(parent: parent, key: $0) } ?? parent
            ) as? T
        }
        if let dictionaryType = T.self as? any DecodableDictionary.Type {
            return try dictionaryType.decodeMessagePackMap(
                from: object, context: self, node: key.map { CodingPathNode(parent: parent, key: $0) } ?? parent
            ) as? T
        }
        if plainTypes.count < 64 {
            // Through a local (see `take`): no run-time exclusivity checks on the cache.
            var types = take(&plainTypes)
            types.append(ObjectIdentifier(T.self))
            plainTypes = types
        }
        return nil
    }

    /// Bool and the numeric types, read directly.
    @inline(__always)
    private func decodeNumber<T: Decodable>(
        _ type: T.Type, from object: ObjectRef, parent: CodingPathNode?, key: (any CodingKey)?
    ) throws -> T? {
        func path() -> [any CodingKey] { CodingPathNode.path(parent, appendingOptional: key) }
        if T.self == Int.self { return unsafeBitCast(try object.decodeInteger(Int.self, path), to: T.self) }
        if T.self == Bool.self { return unsafeBitCast(try object.decodeBool(path), to: T.self) }
        if T.self == Double.self { return unsafeBitCast(try object.decodeDouble(path), to: T.self) }
        if T.self == Float.self { return unsafeBitCast(try object.decodeFloat(path), to: T.self) }
        if T.self == Int64.self { return unsafeBitCast(try object.decodeInteger(Int64.self, path), to: T.self) }
        if T.self == Int32.self { return unsafeBitCast(try object.decodeInteger(Int32.self, path), to: T.self) }
        if T.self == Int16.self { return unsafeBitCast(try object.decodeInteger(Int16.self, path), to: T.self) }
        if T.self == Int8.self { return unsafeBitCast(try object.decodeInteger(Int8.self, path), to: T.self) }
        if T.self == UInt.self { return unsafeBitCast(try object.decodeInteger(UInt.self, path), to: T.self) }
        if T.self == UInt64.self { return unsafeBitCast(try object.decodeInteger(UInt64.self, path), to: T.self) }
        if T.self == UInt32.self { return unsafeBitCast(try object.decodeInteger(UInt32.self, path), to: T.self) }
        if T.self == UInt16.self { return unsafeBitCast(try object.decodeInteger(UInt16.self, path), to: T.self) }
        if T.self == UInt8.self { return unsafeBitCast(try object.decodeInteger(UInt8.self, path), to: T.self) }
        return nil
    }

    private func decodeDate(_ object: ObjectRef, _ path: ObjectRef.Path) throws -> Date {
        let time = try object.decodeTimestamp(as: Date.self, path)
        return Date(timeIntervalSince1970: Double(time.tv_sec) + Double(time.tv_nsec) / 1e9)
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
