import ArgumentParsing
import Glibc

/// reactor-node: one binary for every role of a ReactorBus deployment.
@main
enum ReactorNode {
    typealias Run = @Sendable (ParsedArguments) async throws -> Int32

    /// Every subcommand, in help order.
    static let commands: [(spec: Command, run: Run)] = [
        (AuthorityCommand.spec, AuthorityCommand.run),
        (WorkerCommand.spec, WorkerCommand.run),
        (SendCommand.spec, SendCommand.run),
        (ObserveCommand.spec, ObserveCommand.run),
        (KeygenCommand.spec, KeygenCommand.run),
        (DemoCommand.spec, DemoCommand.run),
    ]

    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        guard let name = arguments.first else {
            Output.error(usage)
            exit(UsageError.exitCode)
        }
        arguments.removeFirst()
        if ["--help", "-h", "help"].contains(name) {
            Output.line(usage)
            exit(0)
        }
        guard let command = commands.first(where: { $0.spec.name == name }) else {
            fail("unknown command '\(name)'; run 'reactor-node --help' for the list", code: UsageError.exitCode)
        }
        do {
            guard let parsed = try command.spec.parse(arguments, environment: ProcessInfoEnvironment.current) else {
                Output.line(command.spec.help)
                exit(0)
            }
            exit(try await command.run(parsed))
        } catch let error as UsageError {
            fail(error.message, code: UsageError.exitCode)
        } catch let error as CLIError {
            fail(error.description, code: error.exitCode)
        } catch {
            fail("\(name): \(error)", code: 1)
        }
    }

    static var usage: String {
        var lines = [
            "reactor-node — a Redux-style state machine across processes over ZeroMQ and MessagePack", "",
            "Usage: reactor-node COMMAND [options]", "", "Commands:",
        ]
        let listed = commands.filter { !$0.spec.isHidden }
        let width = (listed.map(\.spec.name.count).max() ?? 0) + 2
        for (spec, _) in listed {
            lines.append("  " + spec.name + String(repeating: " ", count: width - spec.name.count) + spec.summary)
        }
        lines += ["", "Run 'reactor-node COMMAND --help' for a command's options. Every option can also be set as REACTOR_<OPTION>."]
        return lines.joined(separator: "\n")
    }

    static func fail(_ message: String, code: Int32) -> Never {
        Output.error("reactor-node: \(message)")
        exit(code)
    }
}
