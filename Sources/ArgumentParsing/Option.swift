/// One `--name VALUE` option or `--name` flag of a command.
///
/// Every option can also come from the environment as `REACTOR_<NAME>` (upper case, dashes as
/// underscores: `--log-level` is `REACTOR_LOG_LEVEL`); the command line wins over the environment,
/// the environment over the default.
public struct Option: Sendable, Hashable {
    /// The long name without dashes (`log-level`).
    public var name: String
    /// Placeholder for the value in help (`EP`, `N`); `nil` makes the option a flag.
    public var valueName: String?
    /// One line of help.
    public var help: String
    /// The value when neither the command line nor the environment gives one.
    public var defaultValue: String?
    /// Whether the option must be given.
    public var isRequired: Bool
    /// Whether `--help` leaves it out: knobs for tests and tools, accepted like any other option.
    public var isHidden: Bool = false

    /// An option that takes a value.
    public static func value(_ name: String, _ valueName: String, help: String, default defaultValue: String? = nil, required: Bool = false) -> Option {
        Option(name: name, valueName: valueName, help: help, defaultValue: defaultValue, isRequired: required)
    }

    /// A flag: present or not.
    public static func flag(_ name: String, help: String) -> Option {
        Option(name: name, valueName: nil, help: help, defaultValue: nil, isRequired: false)
    }

    /// The same option, left out of `--help`.
    public func hidden() -> Option {
        var copy = self
        copy.isHidden = true
        return copy
    }

    /// Whether this option is a flag.
    public var isFlag: Bool { valueName == nil }

    /// The environment variable that can set this option.
    public var environmentName: String {
        "REACTOR_" + name.uppercased().map { $0 == "-" ? "_" : $0 }.map(String.init).joined()
    }
}
