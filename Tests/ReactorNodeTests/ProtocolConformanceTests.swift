import Foundation
import Testing
import TestSupport
import TestTraits

/// docs/PROTOCOL.md against the wire: `examples/python/protocol_conformance.py`, a client (and,
/// with `--workers`, a worker) written from the document alone, checks a fresh counter authority
/// and must find no difference.
@Suite(.spawnsProcesses) struct ProtocolConformanceTests {
    /// Whether `python3` runs and imports pyzmq and msgpack (scripts/ensure-deps.sh --python):
    /// actually tried, so the test is skipped only when the script could not run at all.
    static let pythonHasZMQAndMsgpack = Python.imports("zmq, msgpack")

    @Test(.enabled(if: pythonHasZMQAndMsgpack, "python3 with pyzmq and msgpack (scripts/ensure-deps.sh --python)"))
    func aClientWrittenFromTheDocumentFindsTheWireAsDocumented() async throws {
        let cluster = try await ClusterProcesses()
        let script = ChildProcess.packageRoot + "/examples/python/protocol_conformance.py"
        let check = try ChildProcess.program(executable: "/usr/bin/env",
                                    arguments: ["python3", script, "--actions", cluster.endpoints.actions, "--feed", cluster.endpoints.feed,
                                                "--workers", cluster.endpoints.workers,
                                                "--doc", ChildProcess.packageRoot + "/docs/PROTOCOL.md"],
                                    name: "protocol-conformance")
        let status = await check.waitForExit(timeout: .seconds(60))
        let failures = check.output.filter { $0.hasPrefix("FAIL") }.joined(separator: "\n")
        #expect(status == 0, "\(failures)\(check.diagnostics)")
        #expect(failures.isEmpty, "\(failures)")
        let summary = try #require(check.output.last, "no summary line\(check.diagnostics)")
        // The script ran its whole list (143 checks, 16 of them as a worker, 7 on batched acks):
        // a run cut short would report fewer.
        #expect(summary == "protocol: 143 passed, 0 failed", "\(summary)")
        #expect(check.output.filter { $0.hasPrefix("ok ") }.count == 143)
        await cluster.stop()
    }
}
