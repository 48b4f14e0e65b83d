/// The shape of one subcommand: its options, its positional arguments and its help.
public struct Command: Sendable {
    /// The subcommand's name (`authority`).
    public var name: String
    /// One line saying what it does.
    public var summary: String
    /// Its options, in help order. `--help` is always accepted.
    public var options: [Option]
    /// Name of the positional arguments in help, `nil` when none are accepted.
    public var positionalName: String?
    /// Lines of help after the option list (examples, notes).
    public var discussion: String
    /// Whether the command list in `reactor-node --help` leaves it out (internal helpers).
    public var isHidden: Bool
    /// The program the command belongs to, as its help names it (`reactor-node`, `reactor-bench`).
    public var program: String

    /// Creates a command.
    public init(name: String, summary: String, options: [Option], positionalName: String? = nil, discussion: String = "", hidden: Bool = false,
                program: String = "reactor-node") {
        self.program = program
        self.name = name
        self.summary = summary
        self.options = options
        self.positionalName = positionalName
        self.discussion = discussion
        self.isHidden = hidden
    }

    /// Parses `arguments` (without the program and subcommand names) with `environment`.
    ///
    /// - Returns: `nil` when `--help` was asked for.
    /// - Throws: ``UsageError`` naming the unknown option, the missing value or the missing
    ///   required option.
    public func parse(_ arguments: [String], environment: [String: String] = [:]) throws(UsageError) -> ParsedArguments? {
        var values: [String: String] = [:]
        var flags: Set<String> = []
        var given: Set<String> = []
        var positionals: [String] = []
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("--") || argument == "-" {
                guard positionalName != nil else {
                    throw UsageError("\(name): unexpected argument '\(argument)'; see '\(invocation) --help'")
                }
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            var key = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = key.firstIndex(of: "=") {
                inlineValue = String(key[key.index(after: equals)...])
                key = String(key[..<equals])
            }
            if key == "help" { return nil }
            guard let option = options.first(where: { $0.name == key }) else {
                throw UsageError("\(name): unknown option '--\(key)'; see '\(invocation) --help'")
            }
            if option.isFlag {
                guard inlineValue == nil else { throw UsageError("\(name): '--\(key)' takes no value") }
                flags.insert(key)
            } else if let inlineValue {
                values[key] = inlineValue
            } else {
                guard index < arguments.count else {
                    throw UsageError("\(name): '--\(key)' needs a value (\(option.valueName ?? "VALUE"))")
                }
                values[key] = arguments[index]
                index += 1
            }
        }
        for option in options {
            if option.isFlag {
                if !flags.contains(option.name), let raw = environment[option.environmentName], Self.isTrue(raw) {
                    flags.insert(option.name)
                }
            } else if values[option.name] != nil {
                given.insert(option.name)
            } else {
                if let fromEnvironment = environment[option.environmentName], !fromEnvironment.isEmpty {
                    values[option.name] = fromEnvironment
                    given.insert(option.name)
                } else if let fallback = option.defaultValue {
                    values[option.name] = fallback
                } else if option.isRequired {
                    throw UsageError("\(name): missing '--\(option.name) \(option.valueName ?? "VALUE")' (or \(option.environmentName)); see '\(invocation) --help'")
                }
            }
        }
        return ParsedArguments(command: name, values: values, flags: flags, positionals: positionals, given: given)
    }

    /// How the command is run: `reactor-node authority`, or `reactor-bench` for a program's only command.
    private var invocation: String { name == program ? program : "\(program) \(name)" }

    /// The help text.
    public var help: String {
        var lines = ["\(invocation) — \(summary)", "", "Usage: \(invocation) [options]\(positionalName.map { " \($0)..." } ?? "")", "", "Options:"]
        let rendered = options.filter { !$0.isHidden }.map { option in
            ("--\(option.name)" + (option.valueName.map { " \($0)" } ?? ""), option)
        }
        let width = (rendered.map(\.0.count).max() ?? 0) + 2
        for (left, option) in rendered {
            var line = "  " + left + String(repeating: " ", count: width - left.count) + option.help
            var notes: [String] = []
            if let fallback = option.defaultValue { notes.append("default \(fallback)") }
            if option.isRequired { notes.append("required") }
            notes.append("env \(option.environmentName)")
            line += " (" + notes.joined(separator: ", ") + ")"
            lines.append(line)
        }
        lines.append("  --help" + String(repeating: " ", count: max(1, width - 6)) + "show this help")
        if !discussion.isEmpty { lines += ["", discussion] }
        return lines.joined(separator: "\n")
    }

    private static func isTrue(_ raw: String) -> Bool {
        ["1", "true", "yes", "on"].contains(raw.lowercased())
    }
}
