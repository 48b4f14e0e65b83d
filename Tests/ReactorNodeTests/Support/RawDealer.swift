import ZeroMQ

/// A raw DEALER connected to a running node, for tests that speak bytes (or messages a real peer
/// never sends) to it. Owns its context; closes both when it goes away.
final class RawDealer {
    let context: ZMQContext
    let socket: ZMQSocket

    init(_ endpoint: String) throws {
        context = try ZMQContext()
        socket = try ZMQSocket(context: context, type: .dealer)
        try socket.set(.linger, 0)
        try socket.connect(endpoint)
    }

    deinit {
        socket.close()
        context.terminate(timeout: .seconds(2))
    }

    func send(_ frames: [[UInt8]]) throws { _ = try socket.trySend(frames) }

    /// The next message within `timeout` milliseconds, or nil.
    func receive(timeout: Int = 3_000) throws -> [[UInt8]]? {
        let poller = ZMQPoller()
        _ = try poller.register(socket)
        guard try poller.poll(timeout: timeout) > 0 else { return nil }
        return try socket.tryReceiveMultipart()
    }
}
