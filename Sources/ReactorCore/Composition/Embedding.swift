/// How a part's values sit inside a whole's: a child reactor's actions, mutations or effects as
/// one case of the parent's enum. Swift has no case paths, so both directions are closures:
///
/// ```swift
/// Embedding(Action.cart) { if case .cart(let action) = $0 { action } else { nil } }
/// ```
public struct Embedding<Whole, Part>: Sendable {
    /// Wraps a part's value in the whole's (usually an enum case constructor).
    public let embed: @Sendable (Part) -> Whole
    /// The part's value inside `whole`, or `nil` when `whole` holds another part's.
    public let extract: @Sendable (Whole) -> Part?

    /// Creates an embedding from its two directions.
    public init(_ embed: @escaping @Sendable (Part) -> Whole, extract: @escaping @Sendable (Whole) -> Part?) {
        self.embed = embed
        self.extract = extract
    }
}
