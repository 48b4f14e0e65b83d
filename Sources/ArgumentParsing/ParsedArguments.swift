/// The options and arguments of one command line, with typed accessors that explain bad values.
public struct ParsedArguments: Sendable, Equatable {
    /// The command they belong to (for messages).
    public var command: String
    /// Option values by name (from the command line, the environment or defaults).
    public var values: [String: String]
    /// Flags that were given.
    public var flags: Set<String>
    /// Positional arguments in order.
    public var positionals: [String]
    /// The options whose value came from the command line or the environment, not a default.
    public var given: Set<String> = []

    /// Whether the option's value was given (on the command line or in the environment) rather
    /// than defaulted: for options that exclude each other although one has a default.
    public func isGiven(_ name: String) -> Bool { given.contains(name) }

    /// The value of an option, if any.
    public func string(_ name: String) -> String? { values[name] }

    /// The value of an option that must be present (required or defaulted).
    public func required(_ name: String) throws(UsageError) -> String {
        guard let value = values[name] else { throw UsageError("\(command): missing '--\(name)'") }
        return value
    }

    /// Whether a flag was given.
    public func flag(_ name: String) -> Bool { flags.contains(name) }

    /// An integer option within `range`.
    public func int(_ name: String, in range: ClosedRange<Int> = Int.min...Int.max) throws(UsageError) -> Int? {
        guard let raw = values[name] else { return nil }
        guard let value = Int(raw), range.contains(value) else {
            throw UsageError("\(command): '--\(name) \(raw)' must be a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// A number-of-seconds option (fractions allowed) that must be positive.
    public func seconds(_ name: String) throws(UsageError) -> Duration? {
        guard let raw = values[name] else { return nil }
        guard let value = Double(raw), value > 0, value.isFinite else {
            throw UsageError("\(command): '--\(name) \(raw)' must be a positive number of seconds")
        }
        // Larger would not fit the milliseconds (it stopped the program), and deadlines on the
        // monotonic clock, in nanoseconds, need the room.
        guard value <= Self.maxSeconds else {
            throw UsageError("\(command): '--\(name) \(raw)' must be at most \(Int(Self.maxSeconds)) seconds (about 31 years)")
        }
        return .milliseconds(Int64(value * 1000))
    }

    /// The longest duration an option takes, in seconds.
    public static var maxSeconds: Double { 1_000_000_000 }

    /// An option that must be one of `choices`.
    public func choice(_ name: String, of choices: [String]) throws(UsageError) -> String? {
        guard let raw = values[name] else { return nil }
        guard choices.contains(raw) else {
            throw UsageError("\(command): '--\(name) \(raw)' must be one of \(choices.joined(separator: ", "))")
        }
        return raw
    }
}
