import MessagePack
import ReactorBus
import ZeroMQ

/// The state phase's baseline: a state's bytes copied through one DEALER/ROUTER pair over tcp
/// loopback, in chunks asked for with credit, as a `snapshot_chunk` fetch does, through the
/// project's own ZeroMQ wrapper and nothing else (no encoding, no decoding, no node loop).
///
/// - `raw-chunk-server`: a ROUTER holding `bytes` bytes in memory; a request is two frames after
///   the routing id, the offset and the most bytes wanted (8 bytes each, little-endian), and the
///   answer is the offset and that slice of the bytes;
/// - `raw-chunk-client`: a DEALER that connects, keeps `credit` requests outstanding, asks for
///   one more per chunk received, appends the chunks to one buffer (as the observer assembles a
///   fetch) and reports the seconds from before the connect to the last byte.
enum RawChunkBaseline {
    /// Serves the chunks of `bytes` bytes until killed.
    static func serve(bytes: Int) -> Int32 {
        RawZMQBaseline.run("raw-chunk-server") { context in
            let socket = try ZMQSocket(context: context, type: .router)
            try socket.set(.sendHighWaterMark, 0)
            try socket.set(.receiveHighWaterMark, 0)
            try socket.set(.linger, 0)
            try socket.bind("tcp://127.0.0.1:*")
            let data = [UInt8](repeating: 0x63, count: bytes)
            Output.line(MessagePackValue.object([("event", "ready"), ("endpoint", .string(try socket.get(.lastEndpoint)))]).rendered)
            while true {
                let frames = try socket.receiveMultipart()
                guard frames.count == 3, let offset = number(frames[1]), let wanted = number(frames[2]), offset <= UInt64(bytes) else { continue }
                let start = Int(offset)
                let end = start + Int(min(wanted, UInt64(bytes - start)))
                try socket.send(frames[0], more: true)
                try socket.send(frames[1], more: true)
                try data.withUnsafeBytes { all in try socket.send(UnsafeRawBufferPointer(rebasing: all[start..<end])) }
            }
        }
    }

    /// Fetches `bytes` bytes in chunks of `chunkBytes` with `credit` requests outstanding.
    static func fetch(endpoint: String, bytes: Int, chunkBytes: Int, credit: Int) -> Int32 {
        RawZMQBaseline.run("raw-chunk-client") { context in
            let started = MonotonicClock.nanoseconds()
            let socket = try ZMQSocket(context: context, type: .dealer)
            try socket.set(.linger, 0)
            try socket.set(.receiveTimeout, RawZMQBaseline.receiveTimeout)
            try socket.connect(endpoint)
            var assembled = [UInt8]()
            var asked = 0
            func ask() throws {
                try socket.send(encode(UInt64(asked)), more: true)
                try socket.send(encode(UInt64(chunkBytes)))
                asked += chunkBytes
            }
            while asked < bytes && asked < credit * chunkBytes { try ask() }
            while assembled.count < bytes {
                let frames = try socket.receiveMultipart()
                guard frames.count == 2, number(frames[0]) == UInt64(assembled.count) else {
                    throw RawZMQBaseline.BaselineFailure("a chunk out of order after \(assembled.count) bytes")
                }
                if assembled.isEmpty { assembled.reserveCapacity(bytes) }
                assembled.append(contentsOf: frames[1])
                if asked < bytes { try ask() }
            }
            let seconds = Double(MonotonicClock.nanoseconds() - started) / 1e9
            Output.line(MessagePackValue.object([
                ("event", "result"), ("bytes", .whole(assembled.count)), ("chunk_bytes", .whole(chunkBytes)), ("credit", .whole(credit)),
                ("seconds", .number(seconds, places: 4)),
            ]).rendered)
            socket.close()
        }
    }

    private static func encode(_ value: UInt64) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian, Array.init)
    }

    private static func number(_ frame: [UInt8]) -> UInt64? {
        guard frame.count == 8 else { return nil }
        return frame.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
    }
}
