import ArgumentParsing
import MessagePack
import ReactorBus
import ReactorCore
import ReactorStorage

/// `reactor-node journal dump|verify`: read an authority's data directory without changing it.
enum JournalCommand {
    static func spec(_ node: NodeProgram) -> Command {
        Command(
            name: "journal",
            summary: "dump or verify an authority's journal and snapshots (read-only; safe beside a running authority)",
            options: dataOptions(node) + [
                .value("from", "VERSION", help: "dump: records from the one that reaches this state version"),
                .value("to", "VERSION", help: "dump: records up to the one that reaches this state version"),
                .flag("json", help: "dump: one JSON object per record"),
            ],
            positionalName: "dump|verify",
            discussion: """
            dump: every journal record from the oldest state the directory can rebuild, replayed
            through the app's types: LSN, kind, client and action, job and mutation, and the
            state's version after it. verify: checks every segment header, record checksum and
            LSN, the segments' continuity and every snapshot's checksum; prints a JSON summary and
            exits 0 when intact (a torn tail, which a crash leaves and the authority cuts, counts
            as intact), 65 for any other damage. Neither takes the directory's lock or writes
            anything: run them beside a live authority or on a copy. Progress goes to stderr.
            """,
            program: node.name
        )
    }

    static func run(_ arguments: ParsedArguments, _ node: NodeProgram) async throws -> Int32 {
        guard arguments.positionals.count == 1, let action = arguments.positionals.first, ["dump", "verify"].contains(action) else {
            throw CLIError.usage("journal: say what to do: '\(node.name) journal dump --data DIR' or '\(node.name) journal verify --data DIR'")
        }
        let app = try node.apps.app(arguments)
        let reader = try directoryReader(arguments, app: app.name)
        if action == "verify" { return try verify(reader) }
        let from = try version(arguments, "from")
        let to = try version(arguments, "to")
        if let from, let to, from > to { throw CLIError.usage("journal dump: --from \(from) is after --to \(to)") }
        return try await node.apps.visit(arguments, Dumper(reader: reader, schema: app.schema, from: from, to: to, json: arguments.flag("json")))
    }

    /// `--app`, `--data` and `--snapshot-dir`: what every tool over a data directory takes.
    static func dataOptions(_ node: NodeProgram) -> [Option] {
        [
            node.apps.appOption,
            .value("data", "DIR", help: "the authority's data directory", required: true),
            .value("snapshot-dir", "DIR", help: "where its snapshots are, if not DATA/snapshots"),
        ]
    }

    /// The data directory named by `--data` (and `--snapshot-dir`), which must exist.
    static func directoryReader(_ arguments: ParsedArguments, app: String) throws -> DataDirectoryReader {
        let directory = try arguments.required("data")
        guard FileManagerCheck.exists(directory + "/journal") else {
            throw CLIError.usage("\(arguments.command): \(directory) is not an authority's data directory (it has no journal/): give the --data of the authority")
        }
        return DataDirectoryReader(directory: directory, app: app, snapshotDirectory: arguments.string("snapshot-dir"))
    }

    /// A state version option (`nil` when not given).
    static func version(_ arguments: ParsedArguments, _ name: String) throws -> UInt64? {
        guard let raw = arguments.string(name) else { return nil }
        guard let value = UInt64(raw) else { throw CLIError.usage("\(arguments.command): --\(name) takes a state version (0 or more), got '\(raw)'") }
        return value
    }

    private static func verify(_ reader: DataDirectoryReader) throws -> Int32 {
        let scan: DataDirectoryReader.JournalScan
        do {
            scan = try reader.journal()
        } catch {
            throw CLIError("journal verify", error)
        }
        let report = scan.report
        var damaged = false
        var problems: [String] = []
        if let damage = report.damage {
            if damage.isTornTail {
                problems.append("torn tail (a write a crash cut short, never acknowledged; the authority cuts it at start): \(damage)")
            } else {
                damaged = true
                problems.append("journal damaged: \(damage)")
            }
        }
        var snapshots: [String] = []
        for snapshot in try reader.snapshots() {
            if let defect = snapshot.defect {
                damaged = true
                problems.append("snapshot \(snapshot.file) damaged: \(defect)")
            }
            snapshots.append(#"{"lsn":\#(snapshot.lsn),"ok":\#(snapshot.defect == nil)}"#)
        }
        // The records a full read checks once more, as the tools and the authority read them.
        var records = scan.records(after: report.firstLSN > 0 ? report.firstLSN - 1 : 0)
        var read: UInt64 = 0
        let progress = Progress(label: "journal verify", total: report.recordsKept)
        do {
            while try records.next() != nil {
                read += 1
                progress.report(read)
            }
        } catch {
            damaged = true
            problems.append("\(error)")
        }
        for problem in problems { Output.error("journal verify: \(problem)") }
        let damage = problems.isEmpty ? "null" : MessagePackValue.string(problems.joined(separator: "; ")).jsonText()
        Output.line(#"{"segments":\#(report.segmentsScanned),"records":\#(read),"first_lsn":\#(report.firstLSN),"last_lsn":\#(report.lastLSN),"snapshots":[\#(snapshots.joined(separator: ","))],"intact":\#(!damaged),"problems":\#(damage)}"#)
        return damaged ? 65 : 0
    }

    /// `journal dump` for the app's types.
    struct Dumper: AppVisitor {
        let reader: DataDirectoryReader
        let schema: AppSchema
        let from: UInt64?
        let to: UInt64?
        let json: Bool

        func visit<R: Reactor, H: EffectHandler>(reactor: R, effects: H) async throws -> Int32
            where H.Effect == R.Effect, H.Mutation == R.Mutation {
            let history = JournalHistory(directory: reader, reactor: reactor, schema: schema)
            let progress = Progress(label: "journal dump", total: nil)
            var count: UInt64 = 0
            do {
                let start = try history.replay(from: from) { entry, _ in
                    count += 1
                    progress.report(count)
                    if let to, entry.version > to, entry.applied.first.map({ $0.version > to }) ?? true { return false }
                    if let from, entry.version < from { return true }
                    Output.line(Self.line(entry, json: json))
                    return true
                }
                let origin = start.snapshot.map { "snapshot \($0) (journal record \(start.lsn), version \(start.version))" } ?? "the empty state"
                Output.error("journal dump: \(count) record(s) read from \(origin)")
            } catch let error as JournalHistory<R>.Failure {
                throw CLIError.usage("journal dump: \(error)")
            } catch {
                throw CLIError("journal dump", error)
            }
            return 0
        }

        static func line<R: Reactor>(_ entry: JournalHistory<R>.Entry, json: Bool) -> String {
            let fields: [(String, String)]
            switch entry.record {
            case .accepted(let client, let seq, let action):
                fields = [("record", #""accepted""#), ("client", quoted(client)), ("client_seq", "\(seq)"), ("action_seq", "\(entry.actionSeq)"), ("action", value(action))]
            case .emitted(let job, let index, let mutation):
                fields = [("record", #""emitted""#), ("job", "[\(job.actionSeq),\(job.effectIndex)]"), ("emit_index", "\(index)"), ("mutation", value(mutation))]
            case .completed(let job, let count):
                fields = [("record", #""completed""#), ("job", "[\(job.actionSeq),\(job.effectIndex)]"), ("emit_count", "\(count)")]
            case .failed(let job, let failure):
                fields = [("record", #""failed""#), ("job", "[\(job.actionSeq),\(job.effectIndex)]"), ("failure", quoted("\(failure)"))]
            case .schema(let version):
                fields = [("record", #""schema""#), ("schema", "\(version)")]
            case .started:
                fields = [("record", #""started""#), ("action_seq", "\(entry.actionSeq)")]
            case .subscriptionEvent(let run, let index, let action):
                fields = [("record", #""subscription_event""#), ("run", "\(run)"), ("index", "\(index)"), ("action_seq", "\(entry.actionSeq)"), ("action", value(action))]
            }
            let all = [("lsn", "\(entry.lsn)")] + fields + [("version", "\(entry.version)")]
            if json { return "{" + all.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}" }
            return all.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
        }

        private static func quoted(_ text: String) -> String { MessagePackValue.string(text).jsonText() }

        /// A stored app value as JSON (its MessagePack tree; it decoded with the app's types on replay).
        private static func value(_ bytes: [UInt8]) -> String {
            (try? MessagePackValue(unpacking: bytes).jsonText()) ?? "null"
        }
    }
}
