/// No HTTP answer at all: the connection was refused or cut, or the deadline passed first.
package struct HTTPTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL asked.
    package var url: String
    /// libcurl's reason, in words.
    package var reason: String
    /// Whether the deadline passed (as opposed to a refused or broken connection).
    package var timedOut: Bool

    package var description: String { "\(url): \(reason)" }
}
