import MessagePack
import TestSupport

/// Phase 1: libzmq between two processes through the ZeroMQ wrapper alone (``RawZMQBaseline``),
/// with the reactor's message sizes.
///
/// PUB->SUB throughput with three-frame messages shaped like feed snapshots; DEALER<->ROUTER
/// round trips one at a time (action-sized request, ack-sized answer); and the same exchange
/// pipelined with `window` messages in flight.
enum BaselinePhase {
    static func run(plan: BenchPlan, sizes: WireSizes) async throws -> BenchResults.Baseline {
        let actionFrames = [sizes.actionHeader, sizes.actionPayload].map(String.init).joined(separator: ",")

        Output.error("bench: baseline — raw PUB->SUB, \(plan.messages.grouped) messages of \(sizes.snapshotFrames.reduce(0, +)) bytes")
        let publisher = try ChildProcess.peer(["raw-pub", "--count", String(plan.messages), "--frames", sizes.snapshotFrames.map(String.init).joined(separator: ",")],
            name: "raw-pub")
        let pubsub: MessagePackValue = try await withChildren([publisher]) {
            guard let endpoint = await publisher.waitForEvent("ready", timeout: .seconds(10))?["endpoint"]?.stringValue else {
                throw BenchError.phase("raw-pub did not bind\n\(publisher.logTail())")
            }
            let subscriber = try ChildProcess.peer(["raw-sub", "--endpoint", endpoint], name: "raw-sub")
            return try await withChildren([subscriber]) {
                try await result(of: subscriber, timeout: BenchPlan.limit(plan.messages, minimumRate: 20_000))
            }
        }

        let echo = try ChildProcess.peer(["raw-echo", "--reply", String(sizes.ack)], name: "raw-echo")
        return try await withChildren([echo]) {
            guard let endpoint = await echo.waitForEvent("ready", timeout: .seconds(10))?["endpoint"]?.stringValue else {
                throw BenchError.phase("raw-echo did not bind\n\(echo.logTail())")
            }
            Output.error("bench: baseline — raw DEALER<->ROUTER round trips, \(plan.samples.grouped) of \(sizes.actionHeader + sizes.actionPayload) -> \(sizes.ack) bytes")
            let rttClient = try ChildProcess.peer(["raw-client", "--endpoint", endpoint, "--mode", "rtt", "--count", String(plan.samples), "--frames", actionFrames],
                name: "raw-rtt")
            let rtt = try await withChildren([rttClient]) {
                try await result(of: rttClient, timeout: BenchPlan.limit(plan.samples, minimumRate: 1_000))
            }
            Output.error("bench: baseline — raw pipelined echo, \(plan.messages.grouped) messages, \(plan.window.grouped) in flight")
            let pipeClient = try ChildProcess.peer(["raw-client", "--endpoint", endpoint, "--mode", "pipeline", "--count", String(plan.messages),
                 "--window", String(plan.window), "--frames", actionFrames], name: "raw-echo-client")
            let pipelined = try await withChildren([pipeClient]) {
                try await result(of: pipeClient, timeout: BenchPlan.limit(plan.messages, minimumRate: 20_000))
            }
            return BenchResults.Baseline(
                pubsubPerSecond: pubsub["per_second"]?.doubleValue ?? 0, pubsubMessages: Int(pubsub["received"]?.intValue ?? 0),
                rtt: LatencyRecorder.Summary(json: rtt["latency"]) ?? .init(),
                echoPerSecond: pipelined["per_second"]?.doubleValue ?? 0, echoWindow: plan.window)
        }
    }

    /// The `result` event of a raw peer.
    private static func result(of peer: ChildProcess, timeout: Duration) async throws -> MessagePackValue {
        if let result = await peer.waitForEvent("result", timeout: timeout) { return result }
        throw BenchError.phase("\(peer.name): \(peer.events("failed").first?["error"]?.stringValue ?? "no result within \(timeout)")\n\(peer.logTail())")
    }

    /// Runs `body`, then stops and reaps `children` whatever happened.
    static func withChildren<T>(_ children: [ChildProcess], _ body: () async throws -> T) async throws -> T {
        let outcome: Result<T, any Error>
        do {
            outcome = .success(try await body())
        } catch {
            outcome = .failure(error)
        }
        for child in children { await child.stop(grace: .seconds(3)) }
        return try outcome.get()
    }
}

extension Int {
    /// `1,234,567`.
    var grouped: String {
        let digits = String(self.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result += "," }
            result.append(digit)
        }
        return (self < 0 ? "-" : "") + result
    }
}
