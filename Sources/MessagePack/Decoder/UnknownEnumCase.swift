/// Why an enum did not decode: its map's one key names none of its cases.
///
/// The `underlyingError` of the `DecodingError.typeMismatch` that replaces Swift's
/// "Invalid number of keys found, expected one." for such a value, so that a caller can say which
/// case was unknown and which exist.
package struct UnknownEnumCase: Error, Sendable, Equatable {
    /// The key found, e.g. `dance`.
    package var name: String
    /// The enum's cases in declaration order; empty when they could not be read (a `CodingKey`
    /// type of the enum's own that is not a plain enum).
    package var knownCases: [String]

    package init(name: String, knownCases: [String]) {
        self.name = name
        self.knownCases = knownCases
    }

    /// One sentence, for `DecodingError`'s `debugDescription`.
    var sentence: String {
        knownCases.isEmpty ? "Unknown case '\(name)'." : "Unknown case '\(name)'; the cases are \(knownCases.joined(separator: ", "))."
    }
}
