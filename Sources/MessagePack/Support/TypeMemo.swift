/// A short list in which a coder remembers the types it has classified in one call, or in the
/// calls of a state its thread keeps (those with a dedicated form, or those without), ahead of
/// asking ``PlainTypeSet`` behind its lock.
///
/// The first two types are held inline: most calls (an action, a mutation, an effect) meet one
/// or two types that need remembering, and a list of them cost an allocation per call. Changed as
/// `property = take(&property).adding(type)`, so that the stored memo is only ever read or
/// assigned whole (see ``take(_:)``).
struct TypeMemo: Emptiable {
    /// The most types a memo remembers; a coder that meets more asks again for the rest.
    static let limit = 64

    private var first: ObjectIdentifier?
    private var second: ObjectIdentifier?
    private var rest: [ObjectIdentifier] = []

    /// An empty memo.
    init() {}

    /// Whether `id` is remembered.
    @inline(__always)
    func contains(_ id: ObjectIdentifier) -> Bool {
        if first == id || second == id { return true }
        for known in rest where known == id { return true }
        return false
    }

    /// Whether the memo holds as many types as it can.
    var isFull: Bool { rest.count + 2 >= Self.limit }

    /// The memo with `type` added, unless it is full.
    @inline(__always)
    consuming func adding(_ type: Any.Type) -> TypeMemo {
        if first == nil {
            first = ObjectIdentifier(type)
        } else if second == nil {
            second = ObjectIdentifier(type)
        } else if !isFull {
            rest.append(ObjectIdentifier(type))
        }
        return self
    }
}
