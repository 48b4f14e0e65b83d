import ArgumentParsing
import MessagePack
import ReactorBus
import ReactorCore
import ReactorStorage

/// `reactor-node replay`: the state at any version a data directory can rebuild (time travel).
enum ReplayCommand {
    static func spec(_ node: NodeProgram) -> Command {
        Command(
            name: "replay",
            summary: "print the state at a version, rebuilt from a data directory (read-only)",
            options: JournalCommand.dataOptions(node) + [
                .value("to-version", "VERSION", help: "the state version to rebuild", required: true),
                .flag("json", help: #"one JSON line: {"version":V,"action_seq":A,"state":{...}}"#),
            ],
            discussion: """
            Replays the journal from the newest snapshot at or before the version through the
            authority's own engine and the app's reactor (schema migrations included), like a
            restart would, and prints the state at exactly that version. Takes no lock and
            writes nothing: run it beside a live authority or on a copy. Exit 64 for a version the
            directory cannot rebuild (compacted away, or past the journal's end), 65 for damage.
            """,
            program: node.name
        )
    }

    static func run(_ arguments: ParsedArguments, _ node: NodeProgram) async throws -> Int32 {
        let app = try node.apps.app(arguments)
        let reader = try JournalCommand.directoryReader(arguments, app: app.name)
        guard let version = try JournalCommand.version(arguments, "to-version") else { throw CLIError.usage("replay: missing '--to-version VERSION'") }
        return try await node.apps.visit(arguments, Rebuilder(reader: reader, schema: app.schema, version: version, json: arguments.flag("json")))
    }

    struct Rebuilder: AppVisitor {
        let reader: DataDirectoryReader
        let schema: AppSchema
        let version: UInt64
        let json: Bool

        func visit<R: Reactor, H: EffectHandler>(reactor: R, effects: H) async throws -> Int32
            where H.Effect == R.Effect, H.Mutation == R.Mutation {
            let rebuilt: JournalHistory<R>.Rebuilt
            do {
                rebuilt = try JournalHistory(directory: reader, reactor: reactor, schema: schema).state(at: version)
            } catch let error as JournalHistory<R>.Failure {
                throw CLIError.usage("replay: \(error)")
            } catch {
                throw CLIError("replay", error)
            }
            let state = (try? MessagePackValue(unpacking: MessagePackEncoder().encode(rebuilt.state)).jsonText()) ?? "null"
            Output.line(json ? #"{"version":\#(rebuilt.version),"action_seq":\#(rebuilt.actionSeq),"state":\#(state)}"# : "version \(rebuilt.version): \(state)")
            return 0
        }
    }
}
