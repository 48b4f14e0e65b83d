import MessagePack
import ReactorBus
import ZeroMQ

/// The baseline: what libzmq does on this machine, through the project's own ZeroMQ wrapper
/// (`ZMQSocket`, the one the nodes use) and nothing else — no codec, no reactor, no node loop —
/// with messages of the sizes the reactor sends.
///
/// Four peer roles, each run as its own process by `reactor-bench peer` (and a round tripper the
/// latency phase's client uses between its actions, see ``RoundTripper``):
/// - `raw-pub`: an XPUB that waits for one subscriber, then publishes N three-frame messages
///   shaped like feed snapshots (topic, header, payload), then an end marker;
/// - `raw-sub`: the SUB that counts them and reports messages per second;
/// - `raw-echo`: a ROUTER that answers every message with one frame of the size of an ack;
/// - `raw-client`: a DEALER that sends action-sized messages (header and payload frames) and
///   measures either one round trip at a time (`rtt`) or throughput with a window in flight
///   (`pipeline`).
///
/// Receives go through the wrapper's zero-copy `receiveFrames` (libzmq's message, no copy);
/// sends through `send`, which libzmq copies once, as the nodes' sends do. Times come from
/// `MonotonicClock`, which every process on the machine shares.
enum RawZMQBaseline {
    /// How long a blocking receive may wait before the peer gives up (ms).
    static let receiveTimeout = 15_000

    // MARK: PUB -> SUB

    /// Publishes `count` messages to the first subscriber, then an end marker.
    static func publish(count: Int, frameSizes: [Int]) -> Int32 {
        run("raw-pub") { context in
            let socket = try ZMQSocket(context: context, type: .xpub)
            try socket.set(.sendHighWaterMark, 0)
            try socket.set(.linger, 10_000)
            try socket.bind("tcp://127.0.0.1:*")
            Output.line(MessagePackValue.object([("event", "ready"), ("endpoint", .string(try socket.get(.lastEndpoint)))]).rendered)
            // An XPUB hears each subscription: publish only once the subscriber is there.
            try socket.set(.receiveTimeout, receiveTimeout)
            guard try socket.receiveFrames({ _, _, _ in }) else { throw BaselineFailure("no subscriber") }
            let frames = frameSizes.map { [UInt8](repeating: 0x73, count: $0) }
            let started = MonotonicClock.nanoseconds()
            for _ in 0..<count { try socket.send(frames) }
            try socket.send(Array("end".utf8))
            let seconds = Double(MonotonicClock.nanoseconds() - started) / 1e9
            Output.line(MessagePackValue.object([("event", "result"), ("published", .whole(count)), ("seconds", .number(seconds, places: 4))]).rendered)
            socket.close()
        }
    }

    /// Receives until the end marker; reports messages per second from the first to the last.
    static func subscribe(endpoint: String) -> Int32 {
        run("raw-sub") { context in
            let socket = try ZMQSocket(context: context, type: .sub)
            try socket.set(.receiveHighWaterMark, 0)
            try socket.set(.linger, 0)
            try socket.set(.receiveTimeout, receiveTimeout)
            try socket.set(.subscribe, [UInt8]())
            try socket.connect(endpoint)
            var received = 0
            var bytes = 0
            var frames = 0
            var first: UInt64 = 0
            while true {
                frames = 0
                guard try socket.receiveFrames({ frame, _, _ in frames += 1; bytes += frame.count }) else {
                    throw BaselineFailure("receive timed out after \(received) messages")
                }
                if frames == 1 { break }
                if received == 0 { first = MonotonicClock.nanoseconds() }
                received += 1
            }
            let seconds = Double(MonotonicClock.nanoseconds() - first) / 1e9
            Output.line(MessagePackValue.object([
                ("event", "result"), ("received", .whole(received)), ("bytes", .whole(bytes)), ("seconds", .number(seconds, places: 4)),
                ("per_second", .number(Double(received) / max(seconds, 1e-9), places: 0)),
            ]).rendered)
            socket.close()
        }
    }

    // MARK: DEALER <-> ROUTER

    /// Answers every message with one `replyBytes` frame, until killed.
    static func echo(replyBytes: Int) -> Int32 {
        run("raw-echo") { context in
            let socket = try ZMQSocket(context: context, type: .router)
            try socket.set(.sendHighWaterMark, 0)
            try socket.set(.receiveHighWaterMark, 0)
            try socket.set(.linger, 0)
            try socket.bind("tcp://127.0.0.1:*")
            Output.line(MessagePackValue.object([("event", "ready"), ("endpoint", .string(try socket.get(.lastEndpoint)))]).rendered)
            let reply = [UInt8](repeating: 0x61, count: replyBytes)
            var identity = [UInt8]()
            identity.reserveCapacity(256)
            while true {
                // The routing id goes back as it came; the other frames are only read.
                guard try socket.receiveFrames({ frame, index, _ in
                    if index == 0 { identity.removeAll(keepingCapacity: true); identity.append(contentsOf: frame) }
                }) else { continue }
                try socket.send(identity, more: true)
                try socket.send(reply)
            }
        }
    }

    /// Round trips one at a time (`rtt`) or `count` messages with `window` in flight (`pipeline`).
    static func client(endpoint: String, mode: String, count: Int, window: Int, frameSizes: [Int]) -> Int32 {
        run("raw-client") { context in
            let socket = try ZMQSocket(context: context, type: .dealer)
            try socket.set(.sendHighWaterMark, 0)
            try socket.set(.receiveHighWaterMark, 0)
            try socket.set(.linger, 0)
            try socket.set(.receiveTimeout, receiveTimeout)
            try socket.connect(endpoint)
            let frames = frameSizes.map { [UInt8](repeating: 0x71, count: $0) }

            /// Receives one whole reply; false on timeout (or nothing waiting, with `wait: false`).
            func receive(wait: Bool = true) throws -> Bool { try socket.receiveFrames(wait: wait) { _, _, _ in } }

            // Warm up: the connection is made and both sides have touched their buffers.
            for _ in 0..<min(1_000, max(count / 10, 10)) {
                try socket.send(frames)
                guard try receive() else { throw BaselineFailure("no answer from \(endpoint)") }
            }
            var result: [(String, MessagePackValue)] = [("event", "result"), ("mode", .string(mode))]
            if mode == "rtt" {
                var recorder = LatencyRecorder(capacity: count)
                for _ in 0..<count {
                    let started = MonotonicClock.nanoseconds()
                    try socket.send(frames)
                    guard try receive() else { throw BaselineFailure("answer timed out") }
                    recorder.record(nanoseconds: MonotonicClock.nanoseconds() - started)
                }
                result.append(("latency", recorder.summary.json))
            } else {
                var sent = 0
                var received = 0
                let started = MonotonicClock.nanoseconds()
                while received < count {
                    while sent < count && sent - received < window {
                        try socket.send(frames)
                        sent += 1
                    }
                    guard try receive() else { throw BaselineFailure("answer timed out after \(received)") }
                    received += 1
                    while received < sent, try receive(wait: false) { received += 1 }
                }
                let seconds = Double(MonotonicClock.nanoseconds() - started) / 1e9
                result += [("messages", .whole(received)), ("window", .whole(window)), ("seconds", .number(seconds, places: 4)),
                           ("per_second", .number(Double(received) / max(seconds, 1e-9), places: 0))]
            }
            Output.line(MessagePackValue.object(result).rendered)
            socket.close()
        }
    }

    // MARK: Paired round trips

    /// A DEALER to a `raw-echo`, for round trips interleaved with the reactor's: the latency
    /// phase measures both in one process, in alternating rounds, so that a busy moment on the
    /// machine weighs on both figures alike.
    final class RoundTripper {
        private let socket: ZMQSocket
        private let frames: [[UInt8]]

        /// Connects and warms up with `warmup` round trips; `nil` if the echo does not answer.
        init?(context: ZMQContext, endpoint: String, frameSizes: [Int], warmup: Int) {
            frames = frameSizes.map { [UInt8](repeating: 0x71, count: $0) }
            do {
                socket = try ZMQSocket(context: context, type: .dealer)
                try socket.set(.linger, 0)
                try socket.set(.receiveTimeout, RawZMQBaseline.receiveTimeout)
                try socket.connect(endpoint)
            } catch {
                return nil
            }
            for _ in 0..<warmup where roundTrip() == nil { return nil }
        }

        deinit { socket.close() }

        /// One round trip in nanoseconds; `nil` on timeout or failure.
        func roundTrip() -> UInt64? {
            let started = MonotonicClock.nanoseconds()
            do {
                try socket.send(frames)
                guard try socket.receiveFrames({ _, _, _ in }) else { return nil }
            } catch {
                return nil
            }
            return MonotonicClock.nanoseconds() - started
        }
    }

    // MARK: Helpers

    /// Why a raw peer gave up.
    struct BaselineFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Runs one role with a context of its own; a failure prints a `failed` event, exit 1.
    static func run(_ role: String, _ body: (ZMQContext) throws -> Void) -> Int32 {
        do {
            let context = try ZMQContext()
            defer { _ = context.terminate(timeout: .seconds(10)) }
            try body(context)
            return 0
        } catch {
            return Output.failed(role: role, "\(error)")
        }
    }
}
