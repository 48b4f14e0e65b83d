import ArgumentParsing
import Foundation
import Glibc

/// reactor-bench: the benchmark, apart from the CLI an operator runs.
///
/// `reactor-bench [options]` runs the benchmark (``BenchCommand``); `reactor-bench peer ROLE`
/// is one of the processes it starts (``PeerCommand``, not listed in `--help`). The authorities
/// and workers it measures are the real `reactor-node` built next to this binary.
@main
enum ReactorBench {
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var spec = BenchCommand.spec
        var run = BenchCommand.run
        if arguments.first == PeerCommand.spec.name {
            arguments.removeFirst()
            spec = PeerCommand.spec
            run = PeerCommand.run
        }
        do {
            guard let parsed = try spec.parse(arguments, environment: ProcessInfo.processInfo.environment) else {
                Output.line(spec.help)
                exit(0)
            }
            exit(try await run(parsed))
        } catch let error as UsageError {
            fail(error.message, code: UsageError.exitCode)
        } catch let error as BenchError {
            fail(error.description, code: error.exitCode)
        } catch {
            fail("\(error)", code: 1)
        }
    }

    static func fail(_ message: String, code: Int32) -> Never {
        Output.error("reactor-bench: \(message)")
        exit(code)
    }
}

extension ParsedArguments {
    /// The integer option `name` within `range`; a usage error when it is missing.
    func requiredInt(_ name: String, in range: ClosedRange<Int>) throws(UsageError) -> Int {
        guard let value = try int(name, in: range) else { throw UsageError("\(command): missing --\(name)") }
        return value
    }
}
