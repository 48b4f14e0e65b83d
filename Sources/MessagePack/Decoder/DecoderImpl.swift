import CMsgPack

/// The `Decoder` handed to `init(from:)`: one unpacked object plus context.
///
/// Three words, so it fits inline in an `any Decoder` existential and
/// creating one per nested value does not allocate.
struct DecoderImpl: Decoder {
    let object: ObjectRef
    /// The call's context, unretained: the call holds it throughout, and a decoder handed to
    /// `init(from:)` is used within that call. Retaining it for each value decoded cost a retain
    /// and a release per element of an array of structs.
    private let unretainedContext: Unmanaged<DecodingContext>
    let path: CodingPathNode?

    init(object: ObjectRef, context: DecodingContext, path: CodingPathNode?) {
        self.object = object
        unretainedContext = .passUnretained(context)
        self.path = path
    }

    var context: DecodingContext { unretainedContext.takeUnretainedValue() }

    var codingPath: [any CodingKey] { CodingPathNode.path(path) }
    var userInfo: [CodingUserInfoKey: Any] { context.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        try unretainedContext._withUnsafeGuaranteedRef { try $0.keyedContainer(Key.self, map: object, path: path) }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try UnkeyedDecodingContainerImpl(array: object, context: context, path: path)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueDecodingContainerImpl(object: object, context: context, path: path)
    }
}

/// A `nil` object for `superDecoder()` when the "super" key is absent.
enum NilObject {
    /// Written once during initialisation and only read afterwards, so
    /// sharing it between threads is safe.
    nonisolated(unsafe) static let pointer: UnsafePointer<msgpack_object> = {
        let object = UnsafeMutablePointer<msgpack_object>.allocate(capacity: 1)
        object.initialize(to: msgpack_object())
        object.pointee.type = MSGPACK_OBJECT_NIL
        return UnsafePointer(object)
    }()
}
