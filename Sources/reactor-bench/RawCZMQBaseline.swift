import CZMQ
import Glibc
import MessagePack
import ReactorBus

/// The baseline: what libzmq itself does on this machine, called straight from Swift through the
/// C API — no codec, no wrapper types, no reactor — with messages of the sizes the reactor sends.
///
/// Four peer roles, each run as its own process by `reactor-node peer` (and a round
/// tripper the latency phase's client uses between its actions, see ``RoundTripper``):
/// - `raw-pub`: an XPUB that waits for one subscriber, then publishes N three-frame messages
///   shaped like feed snapshots (topic, header, payload), then an end marker;
/// - `raw-sub`: the SUB that counts them and reports messages per second;
/// - `raw-echo`: a ROUTER that answers every message with one frame of the size of an ack;
/// - `raw-client`: a DEALER that sends action-sized messages (header and payload frames) and
///   measures either one round trip at a time (`rtt`) or throughput with a window in flight
///   (`pipeline`).
///
/// This is the only bench code that imports CZMQ: the point is to measure without our layers.
/// (Times come from `MonotonicClock`, which every process on the machine shares.)
enum RawCZMQBaseline {
    /// How long a blocking receive may wait before the peer gives up (ms).
    static let receiveTimeout: Int32 = 15_000

    // MARK: PUB -> SUB

    /// Publishes `count` messages to the first subscriber, then an end marker.
    static func publish(count: Int, frameSizes: [Int]) -> Int32 {
        let context = zmq_ctx_new()
        let socket = zmq_socket(context, ZMQ_XPUB)
        setOption(socket, ZMQ_SNDHWM, 0)
        setOption(socket, ZMQ_LINGER, 10_000)
        guard zmq_bind(socket, "tcp://127.0.0.1:*") == 0 else { return fail("bind", context, socket) }
        Output.line(MessagePackValue.object([("event", "ready"), ("endpoint", .string(lastEndpoint(socket)))]).rendered)
        // An XPUB hears each subscription: publish only once the subscriber is there.
        setOption(socket, ZMQ_RCVTIMEO, receiveTimeout)
        var subscription = zmq_msg_t()
        zmq_msg_init(&subscription)
        guard zmq_msg_recv(&subscription, socket, 0) >= 0 else { return fail("no subscriber", context, socket) }
        zmq_msg_close(&subscription)
        let frames = frameSizes.map { [UInt8](repeating: 0x73, count: $0) }
        let started = MonotonicClock.nanoseconds()
        for _ in 0..<count { sendMultipart(frames, on: socket) }
        _ = zmq_send(socket, "end", 3, 0)
        let seconds = Double(MonotonicClock.nanoseconds() - started) / 1e9
        Output.line(MessagePackValue.object([("event", "result"), ("published", .whole(count)), ("seconds", .number(seconds, places: 4))]).rendered)
        zmq_close(socket)
        zmq_ctx_term(context)
        return 0
    }

    /// Receives until the end marker; reports messages per second from the first to the last.
    static func subscribe(endpoint: String) -> Int32 {
        let context = zmq_ctx_new()
        let socket = zmq_socket(context, ZMQ_SUB)
        setOption(socket, ZMQ_RCVHWM, 0)
        setOption(socket, ZMQ_LINGER, 0)
        setOption(socket, ZMQ_RCVTIMEO, receiveTimeout)
        zmq_setsockopt(socket, ZMQ_SUBSCRIBE, "", 0)
        guard zmq_connect(socket, endpoint) == 0 else { return fail("connect", context, socket) }
        var message = zmq_msg_t()
        var received = 0
        var bytes = 0
        var first: UInt64 = 0
        while true {
            guard let whole = receiveMultipart(on: socket, into: &message) else {
                return fail("receive timed out after \(received) messages", context, socket)
            }
            bytes += whole.bytes
            if whole.frames == 1 { break }
            if received == 0 { first = MonotonicClock.nanoseconds() }
            received += 1
        }
        let seconds = Double(MonotonicClock.nanoseconds() - first) / 1e9
        Output.line(MessagePackValue.object([
            ("event", "result"), ("received", .whole(received)), ("bytes", .whole(bytes)), ("seconds", .number(seconds, places: 4)),
            ("per_second", .number(Double(received) / max(seconds, 1e-9), places: 0)),
        ]).rendered)
        zmq_close(socket)
        zmq_ctx_term(context)
        return 0
    }

    // MARK: DEALER <-> ROUTER

    /// Answers every message with one `replyBytes` frame, until killed.
    static func echo(replyBytes: Int) -> Int32 {
        let context = zmq_ctx_new()
        let socket = zmq_socket(context, ZMQ_ROUTER)
        setOption(socket, ZMQ_SNDHWM, 0)
        setOption(socket, ZMQ_RCVHWM, 0)
        setOption(socket, ZMQ_LINGER, 0)
        guard zmq_bind(socket, "tcp://127.0.0.1:*") == 0 else { return fail("bind", context, socket) }
        Output.line(MessagePackValue.object([("event", "ready"), ("endpoint", .string(lastEndpoint(socket)))]).rendered)
        let reply = [UInt8](repeating: 0x61, count: replyBytes)
        var identity = zmq_msg_t()
        var part = zmq_msg_t()
        while true {
            zmq_msg_init(&identity)
            guard zmq_msg_recv(&identity, socket, 0) >= 0 else {
                zmq_msg_close(&identity)
                if zmq_errno() == EINTR { continue }
                return fail("receive", context, socket)
            }
            var more = zmq_msg_more(&identity) != 0
            while more {
                zmq_msg_init(&part)
                _ = zmq_msg_recv(&part, socket, 0)
                more = zmq_msg_more(&part) != 0
                zmq_msg_close(&part)
            }
            // The routing id goes back as it came (zmq_msg_send takes the message over).
            _ = zmq_msg_send(&identity, socket, ZMQ_SNDMORE)
            _ = reply.withUnsafeBytes { zmq_send(socket, $0.baseAddress, $0.count, 0) }
        }
    }

    /// Round trips one at a time (`rtt`) or `count` messages with `window` in flight (`pipeline`).
    static func client(endpoint: String, mode: String, count: Int, window: Int, frameSizes: [Int]) -> Int32 {
        let context = zmq_ctx_new()
        let socket = zmq_socket(context, ZMQ_DEALER)
        setOption(socket, ZMQ_SNDHWM, 0)
        setOption(socket, ZMQ_RCVHWM, 0)
        setOption(socket, ZMQ_LINGER, 0)
        setOption(socket, ZMQ_RCVTIMEO, receiveTimeout)
        guard zmq_connect(socket, endpoint) == 0 else { return fail("connect", context, socket) }
        let frames = frameSizes.map { [UInt8](repeating: 0x71, count: $0) }
        var message = zmq_msg_t()

        func send() { sendMultipart(frames, on: socket) }
        /// Receives one whole reply; false on timeout (or nothing waiting, with ZMQ_DONTWAIT).
        func receive(_ flags: Int32 = 0) -> Bool { receiveMultipart(on: socket, into: &message, flags: flags) != nil }

        // Warm up: the connection is made and both sides have touched their buffers.
        for _ in 0..<min(1_000, max(count / 10, 10)) {
            send()
            guard receive() else { return fail("no answer from \(endpoint)", context, socket) }
        }
        var result: [(String, MessagePackValue)] = [("event", "result"), ("mode", .string(mode))]
        if mode == "rtt" {
            var recorder = LatencyRecorder(capacity: count)
            for _ in 0..<count {
                let started = MonotonicClock.nanoseconds()
                send()
                guard receive() else { return fail("answer timed out", context, socket) }
                recorder.record(nanoseconds: MonotonicClock.nanoseconds() - started)
            }
            result.append(("latency", recorder.summary.json))
        } else {
            var sent = 0
            var received = 0
            let started = MonotonicClock.nanoseconds()
            while received < count {
                while sent < count && sent - received < window {
                    send()
                    sent += 1
                }
                guard receive() else { return fail("answer timed out after \(received)", context, socket) }
                received += 1
                while received < sent, receive(ZMQ_DONTWAIT) { received += 1 }
            }
            let seconds = Double(MonotonicClock.nanoseconds() - started) / 1e9
            result += [("messages", .whole(received)), ("window", .whole(window)), ("seconds", .number(seconds, places: 4)),
                       ("per_second", .number(Double(received) / max(seconds, 1e-9), places: 0))]
        }
        Output.line(MessagePackValue.object(result).rendered)
        zmq_close(socket)
        zmq_ctx_term(context)
        return 0
    }

    // MARK: Paired round trips

    /// A raw DEALER to a `raw-echo`, for round trips interleaved with the reactor's: the latency
    /// phase measures both in one process, in alternating rounds, so that a busy moment on the
    /// machine weighs on both figures alike.
    final class RoundTripper {
        private let context: UnsafeMutableRawPointer?
        private let socket: UnsafeMutableRawPointer?
        private let frames: [[UInt8]]
        private var message = zmq_msg_t()

        /// Connects and warms up with `warmup` round trips; `nil` if the echo does not answer.
        init?(endpoint: String, frameSizes: [Int], warmup: Int) {
            context = zmq_ctx_new()
            socket = zmq_socket(context, ZMQ_DEALER)
            frames = frameSizes.map { [UInt8](repeating: 0x71, count: $0) }
            setOption(socket, ZMQ_LINGER, 0)
            setOption(socket, ZMQ_RCVTIMEO, receiveTimeout)
            guard zmq_connect(socket, endpoint) == 0 else { return nil }
            for _ in 0..<warmup where roundTrip() == nil { return nil }
        }

        deinit {
            zmq_close(socket)
            zmq_ctx_term(context)
        }

        /// One round trip in nanoseconds; `nil` on timeout.
        func roundTrip() -> UInt64? {
            let started = MonotonicClock.nanoseconds()
            sendMultipart(frames, on: socket)
            guard receiveMultipart(on: socket, into: &message) != nil else { return nil }
            return MonotonicClock.nanoseconds() - started
        }
    }

    // MARK: Helpers

    /// Sends `frames` as one multipart message.
    private static func sendMultipart(_ frames: [[UInt8]], on socket: UnsafeMutableRawPointer?) {
        for (index, frame) in frames.enumerated() {
            let flags = index < frames.count - 1 ? ZMQ_SNDMORE : 0
            _ = frame.withUnsafeBytes { zmq_send(socket, $0.baseAddress, $0.count, flags) }
        }
    }

    /// Receives one whole multipart message through `message` (reused, so no allocation per
    /// frame); its frame and byte counts, or `nil` on timeout. `flags` apply to the first frame.
    private static func receiveMultipart(
        on socket: UnsafeMutableRawPointer?, into message: inout zmq_msg_t, flags: Int32 = 0
    ) -> (frames: Int, bytes: Int)? {
        var frames = 0
        var bytes = 0
        var more = true
        while more {
            zmq_msg_init(&message)
            guard zmq_msg_recv(&message, socket, frames == 0 ? flags : 0) >= 0 else {
                zmq_msg_close(&message)
                return nil
            }
            bytes += zmq_msg_size(&message)
            more = zmq_msg_more(&message) != 0
            zmq_msg_close(&message)
            frames += 1
        }
        return (frames, bytes)
    }

    private static func setOption(_ socket: UnsafeMutableRawPointer?, _ option: Int32, _ value: Int32) {
        var value = value
        zmq_setsockopt(socket, option, &value, MemoryLayout<Int32>.size)
    }

    private static func lastEndpoint(_ socket: UnsafeMutableRawPointer?) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        var size = buffer.count
        zmq_getsockopt(socket, ZMQ_LAST_ENDPOINT, &buffer, &size)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func fail(_ what: String, _ context: UnsafeMutableRawPointer?, _ socket: UnsafeMutableRawPointer?) -> Int32 {
        let reason = String(cString: zmq_strerror(zmq_errno()))
        Output.error("peer: \(what): \(reason)")
        Output.line(MessagePackValue.object([("event", "failed"), ("error", .string("\(what): \(reason)"))]).rendered)
        zmq_close(socket)
        zmq_ctx_term(context)
        return 1
    }
}
