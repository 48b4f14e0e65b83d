/// A bad value for an app's own option: the command exits 64 with this message.
public struct AppOptionError: Error, Sendable, CustomStringConvertible {
    /// One line naming the option and what was wrong, e.g. `--effect-delay 'x' is not a number`.
    public var message: String

    /// An error with `message`.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}
