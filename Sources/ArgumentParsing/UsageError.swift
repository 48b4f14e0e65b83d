/// A command line that cannot be run: what was wrong and what to do.
///
/// Commands print it as one line and exit with ``exitCode`` (64, `EX_USAGE`).
public struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was wrong, with a hint of what to do.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    /// `EX_USAGE` from sysexits(3).
    public static let exitCode: Int32 = 64

    public var description: String { message }
}
