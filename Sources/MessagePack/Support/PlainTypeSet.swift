import Synchronization

/// Types known, for the life of the process, to have no dedicated MessagePack form: each coder
/// checks a type for one (`is any DecodableArray.Type`, `as? any EncodableDictionary`, ...) once
/// per process instead of once per encode or decode call.
///
/// Those checks are dynamic conformance lookups in the runtime, and a call that codes one small
/// value (an action, a reply) made them for its root type every time: about a tenth of decoding
/// a small enum. Whether a type has a dedicated form never changes, so the answer can be shared by
/// every call on every thread; the coders keep their own unlocked list in front of this one.
final class PlainTypeSet: Sendable {
    /// The types the encoder writes through `encode(to:)` alone.
    static let encoding = PlainTypeSet()
    /// The types the decoder reads through `init(from:)` alone.
    static let decoding = PlainTypeSet()

    /// A process has a bounded number of types; the bound only guards against a generator of them.
    private static let capacity = 4_096

    private let types = Mutex<Set<ObjectIdentifier>>([])

    func contains(_ type: Any.Type) -> Bool {
        types.withLock { $0.contains(ObjectIdentifier(type)) }
    }

    func insert(_ type: Any.Type) {
        types.withLock { types in
            if types.count < Self.capacity { types.insert(ObjectIdentifier(type)) }
        }
    }
}
