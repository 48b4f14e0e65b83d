/// Moves the contents out of `collection`, leaving it empty.
///
/// The coders' sessions keep a few arrays (the writer pool, the type cache, a node's deferred
/// children) in stored properties of their classes. Growing or shrinking such a property in place
/// (`append`, `popLast`) calls into the standard library while the property is being modified, so
/// the compiler cannot rule out an overlapping access and checks every access to that property at
/// run time: about a tenth of an encode's instructions. Changed through a local instead —
/// `var local = take(&property)`, change `local`, `property = local` — the property is only ever
/// read or assigned whole, the compiler proves that no two accesses overlap, and the checks go.
/// The array keeps its single reference throughout, so the change happens in place, uncopied.
/// One in-place change of such a property anywhere in the module brings its checks back.
@inline(__always)
func take<Value: Emptiable>(_ collection: inout Value) -> Value {
    let taken = collection
    collection = Value()
    return taken
}

/// A value ``take(_:)`` can leave empty behind it: the coders' arrays, and ``TypeMemo``.
protocol Emptiable {
    /// The empty value.
    init()
}

extension Array: Emptiable {}
