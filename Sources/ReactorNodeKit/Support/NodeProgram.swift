import ArgumentParsing

/// One node program: its name (in help and messages), its apps and its commands.
struct NodeProgram: Sendable {
    typealias Run = @Sendable (ParsedArguments, NodeProgram) async throws -> Int32

    let name: String
    let apps: AppRegistry

    /// Every subcommand, in help order.
    var commands: [(spec: Command, run: Run)] {
        [
            (AuthorityCommand.spec(self), AuthorityCommand.run),
            (WorkerCommand.spec(self), WorkerCommand.run),
            (SendCommand.spec(self), SendCommand.run),
            (ObserveCommand.spec(self), ObserveCommand.run),
            (RunCommand.spec(self), RunCommand.run),
            (JournalCommand.spec(self), JournalCommand.run),
            (ReplayCommand.spec(self), ReplayCommand.run),
            (InspectCommand.spec(self), InspectCommand.run),
            (KeygenCommand.spec(self), KeygenCommand.run),
            (DemoCommand.spec(self), DemoCommand.run),
        ]
    }

    /// Runs the command `arguments` names and returns the exit code; errors are printed here.
    func run(_ arguments: [String], environment: [String: String]) async -> Int32 {
        var arguments = arguments
        guard let command = arguments.first else {
            Output.error(usage)
            return UsageError.exitCode
        }
        arguments.removeFirst()
        if ["--help", "-h", "help"].contains(command) {
            Output.line(usage)
            return 0
        }
        let commands = self.commands
        guard let chosen = commands.first(where: { $0.spec.name == command }) else {
            return fail("unknown command '\(command)'; run '\(name) --help' for the list", code: UsageError.exitCode)
        }
        do {
            guard let parsed = try chosen.spec.parse(arguments, environment: environment) else {
                Output.line(chosen.spec.help)
                return 0
            }
            return try await chosen.run(parsed, self)
        } catch let error as UsageError {
            return fail(error.message, code: UsageError.exitCode)
        } catch let error as CLIError {
            return fail(error.description, code: error.exitCode)
        } catch {
            return fail("\(command): \(error)", code: 1)
        }
    }

    var usage: String {
        var lines = [
            "\(name) — a Redux-style state machine across processes over ZeroMQ and MessagePack (apps: \(apps.names.joined(separator: ", ")))", "",
            "Usage: \(name) COMMAND [options]", "", "Commands:",
        ]
        let listed = commands.filter { !$0.spec.isHidden }
        let width = (listed.map(\.spec.name.count).max() ?? 0) + 2
        for (spec, _) in listed {
            lines.append("  " + spec.name + String(repeating: " ", count: width - spec.name.count) + spec.summary)
        }
        lines += ["", "Run '\(name) COMMAND --help' for a command's options. Every option can also be set as REACTOR_<OPTION>."]
        return lines.joined(separator: "\n")
    }

    private func fail(_ message: String, code: Int32) -> Int32 {
        Output.error("\(name): \(message)")
        return code
    }
}
