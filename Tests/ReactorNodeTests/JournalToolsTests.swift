import Foundation
import ReactorBus
import ReactorCore
import ReactorLog
import SchemaFixtures
import Testing
import TestSupport
import TestTraits
import ZeroMQ

/// `journal dump`, `journal verify` and `replay` on real data directories: exact output, states
/// equal to what the reactor computes, damage detected, and nothing changed or locked.
@Suite(.spawnsProcesses) struct JournalToolsTests {
    let directory = NSTemporaryDirectory() + "reactorbus-tools-\(UUID().uuidString)"

    func node(_ arguments: [String], name: String) throws -> ChildProcess {
        try ChildProcess.node(arguments, name: name)
    }

    /// `reactor-node ARGS` run to its end: exit code, stdout lines, stderr.
    func tool(_ arguments: [String]) async throws -> (code: Int32?, output: [String], diagnostics: String) {
        let process = try ChildProcess.node(arguments, name: arguments.prefix(2).joined(separator: " "))
        let code = await process.waitForExit(timeout: .seconds(30))
        return (code, process.output, process.diagnostics)
    }

    /// A counter authority with `--data`, `count` countUp actions sent by client "dumper", stopped
    /// (gracefully unless `running`): the authority is returned when still running.
    func counterDirectory(_ count: Int, running: Bool = false) async throws -> ChildProcess? {
        let authority = try node(["authority", "--app", "counter", "--data", directory, "--actions", "tcp://127.0.0.1:*",
                                  "--workers", "tcp://127.0.0.1:*", "--feed", "tcp://127.0.0.1:*"], name: "authority")
        let endpoints = try await authority.endpoints()
        let send = try node(["send", "--app", "counter", "--actions", endpoints.actions, "--client-id", "dumper", "--repeat", String(count), #"{"countUp":{}}"#], name: "send")
        #expect(await send.waitForExit() == 0, "\(send.diagnostics)")
        if running { return authority }
        authority.signal(SIGTERM)
        #expect(await authority.waitForExit() == 0)
        return nil
    }

    @Test func dumpPrintsEveryRecordWithItsVersionAndVerifyFindsItIntact() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try await counterDirectory(4)
        let dump = try await tool(["journal", "dump", "--app", "counter", "--data", directory, "--json"])
        #expect(dump.code == 0, "\(dump.diagnostics)")
        #expect(dump.output == (1...4).map {
            #"{"lsn":\#($0),"record":"accepted","client":"dumper","client_seq":\#($0),"action_seq":\#($0),"action":{"countUp":{}},"version":\#($0)}"#
        })
        let range = try await tool(["journal", "dump", "--app", "counter", "--data", directory, "--from", "2", "--to", "3"])
        #expect(range.output == (2...3).map { #"lsn=\#($0) record="accepted" client="dumper" client_seq=\#($0) action_seq=\#($0) action={"countUp":{}} version=\#($0)"# })
        let verify = try await tool(["journal", "verify", "--app", "counter", "--data", directory])
        #expect(verify.code == 0, "\(verify.diagnostics)")
        #expect(verify.output == [#"{"segments":1,"records":4,"first_lsn":1,"last_lsn":4,"snapshots":[{"lsn":4,"ok":true}],"intact":true,"problems":null}"#])
    }

    @Test func verifyFindsAFlippedByteAndNamesIt() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try await counterDirectory(20)
        let segment = directory + "/journal/segment-00000000000000000001.log"
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: segment)))
        bytes[bytes.count / 2] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: segment))
        let verify = try await tool(["journal", "verify", "--app", "counter", "--data", directory])
        #expect(verify.code == 65)
        #expect(verify.diagnostics.contains("journal damaged"), "\(verify.diagnostics)")
        #expect(verify.diagnostics.contains(segment), "\(verify.diagnostics)")
        #expect(verify.output.first?.contains(#""intact":false"#) == true, "\(verify.output)")
        // Nothing was repaired: the flipped byte is still there.
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: segment))) == bytes)
    }

    @Test func theToolsReadALiveAuthoritysDirectoryWithoutDisturbingIt() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let authority = try #require(try await counterDirectory(6, running: true))
        let verify = try await tool(["journal", "verify", "--app", "counter", "--data", directory])
        #expect(verify.code == 0, "\(verify.diagnostics)")
        let replay = try await tool(["replay", "--app", "counter", "--data", directory, "--to-version", "6", "--json"])
        #expect(replay.output == [#"{"version":6,"action_seq":6,"state":{"count":6}}"#], "\(replay.diagnostics)")
        authority.signal(SIGTERM)
        #expect(await authority.waitForExit() == 0, "the authority still owned its directory: \(authority.diagnostics)")
    }

    @Test func replayRebuildsTheStateTheReactorComputesAtEveryVersionAsked() async throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Release 1 of "tally" with snapshots every 8 records, so later versions start from one.
        let authority = try ChildProcess.program(
            executable: ChildProcess.schemaFixture,
            arguments: ["authority", "--app", "tally", "--data", directory, "--snapshot-every", "8", "--actions", "tcp://127.0.0.1:*",
                        "--workers", "tcp://127.0.0.1:*", "--feed", "tcp://127.0.0.1:*"], name: "authority")
        let endpoints = try await authority.endpoints()
        let actions: [TallyV1.Action] = (1...20).map { .add($0) }
        let context = try ZMQContext()
        let client = try ActionClient<TallyV1>(configuration: ActionClientConfiguration(actionsEndpoint: endpoints.actions, window: 1),
                                               logger: Logger(label: "client", sink: .discard), context: context)
        try client.start()
        for action in actions { _ = try await client.send(action) }
        client.close()
        await client.wait()
        context.terminate(timeout: .seconds(2))
        let written = try await WireProbe(actions: endpoints.actions).stats(within: .seconds(10)) { $0["snapshots_written"] ?? 0 >= 2 }
        #expect(written["snapshots_written"] ?? 0 >= 2)

        // What the reactor computes, version by version, in this process.
        var sequencer = Sequencer(reactor: TallyV1())
        var expected: [UInt64: Int] = [:]
        for action in actions {
            _ = sequencer.accept(action)
            expected[sequencer.version] = sequencer.state.count
        }
        for version: UInt64 in [1, 7, 8, 13, 20] {
            let replay = try await tool(["replay", "--app", "tally", "--data", directory, "--to-version", String(version), "--json"], fixture: true)
            #expect(replay.output == [#"{"version":\#(version),"action_seq":\#(version),"state":{"count":\#(expected[version] ?? -1)}}"#], "\(replay.diagnostics)")
        }
        let beyond = try await tool(["replay", "--app", "tally", "--data", directory, "--to-version", "21"], fixture: true)
        #expect(beyond.code == 64)
        #expect(beyond.diagnostics.contains("version 21 is past the journal's end (version 20)"), "\(beyond.diagnostics)")
        authority.signal(SIGTERM)
        #expect(await authority.waitForExit() == 0)
    }

    /// The schema-fixture program (release 1 of "tally") run to its end.
    func tool(_ arguments: [String], fixture: Bool) async throws -> (code: Int32?, output: [String], diagnostics: String) {
        let process = try ChildProcess.program(executable: ChildProcess.schemaFixture, arguments: arguments, name: "tool")
        let code = await process.waitForExit(timeout: .seconds(30))
        return (code, process.output, process.diagnostics)
    }
}
