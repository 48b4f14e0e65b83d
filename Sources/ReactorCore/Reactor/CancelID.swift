/// Names effects that can be cancelled together: the composable architecture's cancel id.
///
/// An effect carries one through ``Reactor/cancelID(for:)``; `mutate` cancels every open job
/// with an id by listing it in ``Mutations/cancel``, and an effect whose
/// ``Reactor/cancelsInFlight(_:)`` is true cancels the open jobs with its id when it starts.
/// A plain string so that it is the same in every process and in the journal.
///
/// ```swift
/// func cancelID(for effect: Effect) -> CancelID? {
///     switch effect { case .search: "search" }
/// }
/// ```
public struct CancelID: Hashable, Codable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The id's text.
    public var rawValue: String

    /// Creates an id from its text.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    public init(stringLiteral value: String) {
        self.init(value)
    }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }
}
