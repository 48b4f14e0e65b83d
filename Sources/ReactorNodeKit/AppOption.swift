import ArgumentParsing

/// An option an app adds to the commands that run its effects (`worker`, `run`), e.g. counter's
/// `--effect-delay SECONDS`. Like every option it can also be set as `REACTOR_<NAME>`.
public struct AppOption: Sendable, Hashable {
    /// The option's name without dashes (`effect-delay`).
    public var name: String
    /// What its value is called in help (`SECONDS`).
    public var valueName: String
    /// One line of help.
    public var help: String

    /// An option taking one value; absent unless given.
    public init(_ name: String, _ valueName: String, help: String) {
        self.name = name
        self.valueName = valueName
        self.help = help
    }

    var option: Option { .value(name, valueName, help: help) }
}
