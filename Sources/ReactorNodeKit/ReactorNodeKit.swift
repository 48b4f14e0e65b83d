import ArgumentParsing
import Glibc

/// The `reactor-node` command line as a library: build your own node program around your own apps.
///
/// ```swift
/// import ReactorNodeKit
///
/// @main struct MyNode {
///     static func main() async {
///         await ReactorNodeKit.main(apps: [
///             App("ledger", reactor: Ledger(), effects: LedgerEffects()),
///         ])
///     }
/// }
/// ```
///
/// The program then has every command of `reactor-node` (`authority`, `worker`, `send`,
/// `observe`, `run`, `journal`, `replay`, `keygen`, `demo`), with the same options, `REACTOR_*` variables, signal
/// handling, output and exit codes (README, "Exit codes"), for the apps given.
public enum ReactorNodeKit {
    /// Runs the command named by `CommandLine.arguments`, then exits the process with its code.
    ///
    /// - Parameters:
    ///   - apps: the apps `--app` can name; with exactly one, `--app` may be left out. Names must
    ///     be distinct and not empty (otherwise the program exits 78 at once).
    ///   - program: the name help and messages call the program; by default the last path
    ///     component of `CommandLine.arguments[0]`.
    public static func main(apps: [App], program: String? = nil) async -> Never {
        let name = program ?? CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? Substring($0)) } ?? "reactor-node"
        let node: NodeProgram
        do {
            node = NodeProgram(name: name, apps: try AppRegistry(apps))
        } catch {
            fail(program: name, error.description, code: error.exitCode)
        }
        exit(await node.run(Array(CommandLine.arguments.dropFirst()), environment: ProcessInfoEnvironment.current))
    }

    static func fail(program: String, _ message: String, code: Int32) -> Never {
        Output.error("\(program): \(message)")
        exit(code)
    }
}
