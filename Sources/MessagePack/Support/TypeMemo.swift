/// The short lists in which a coder remembers the types it has classified in one call (those
/// with a dedicated form and those without), ahead of asking ``PlainTypeSet`` behind its lock.
enum TypeMemo {
    /// The most types a list remembers; a coder that meets more asks again for the rest.
    static let limit = 64

    /// `list` with `type` added, unless the list is full. Used as
    /// `property = TypeMemo.adding(type, to: take(&property))`, so that the stored list is only
    /// ever read or assigned whole (see ``take(_:)``).
    @inline(__always)
    static func adding(_ type: Any.Type, to list: [ObjectIdentifier]) -> [ObjectIdentifier] {
        guard list.count < limit else { return list }
        var list = list
        list.append(ObjectIdentifier(type))
        return list
    }
}
