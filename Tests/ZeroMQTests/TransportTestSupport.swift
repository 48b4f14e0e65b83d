import Foundation
import Synchronization
import Testing
import ZeroMQ
import TestSupport


/// Runs `body` with a fresh context and afterwards requires termination within a deadline.
///
/// Every socket the body creates must be closed by the time it returns.
func withContext<R>(_ body: (ZMQContext) throws -> R) throws -> R {
    let context = try ZMQContext()
    defer { #expect(context.terminate(timeout: promptly)) }
    return try body(context)
}

/// Runs `body` with a PULL socket bound at `endpoint` and a PUSH socket connected to it, both
/// closed afterwards.
func withPushPull<R>(_ context: ZMQContext, at endpoint: String, _ body: (_ push: ZMQSocket, _ pull: ZMQSocket) throws -> R) throws -> R {
    let push = try ZMQSocket(context: context, type: .push)
    let pull = try ZMQSocket(context: context, type: .pull)
    defer { push.close(); pull.close() }
    try pull.bind(endpoint)
    try push.connect(endpoint)
    return try body(push, pull)
}

/// Sends `message` once from a thread of its own, through a PUSH socket it connects to
/// `endpoint`: a message that arrives while the test's thread waits in a poller.
func sendFromAnotherThread(_ context: ZMQContext, to endpoint: String, _ message: [UInt8]) {
    let sender = Thread {
        guard let push = try? ZMQSocket(context: context, type: .push) else { return }
        defer { push.close() }
        guard (try? push.connect(endpoint)) != nil else { return }
        try? push.send(message)
    }
    sender.start()
}

/// Binds to an ephemeral TCP port on the loopback interface and returns the resolved endpoint.
func bindEphemeral(_ socket: ZMQSocket) throws -> String {
    try socket.bind("tcp://127.0.0.1:*")
    return try socket.get(.lastEndpoint)
}

/// Waits up to `timeout` for one whole message on `socket`; `nil` if none arrived in time.
func receive(_ socket: ZMQSocket, within timeout: Duration = promptly) throws -> [[UInt8]]? {
    let poller = ZMQPoller()
    try poller.register(socket)
    let deadline = ContinuousClock.now + timeout
    while true {
        if let message = try socket.tryReceiveMultipart() { return message }
        let left = ContinuousClock.now.duration(to: deadline)
        if left <= .zero { return nil }
        try poller.poll(timeout: max(1, Int(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)))
    }
}

/// UTF-8 bytes of a string, for readable frames.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A frame as text, for readable assertions.
func text(_ frame: [UInt8]) -> String { String(decoding: frame, as: UTF8.self) }

/// Expects `body` to throw a ``ZMQError`` with `code`; returns the error for further checks.
@discardableResult
func expectZMQError<R>(
    _ code: Int32,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> R
) -> ZMQError? {
    do {
        _ = try body()
        Issue.record("expected ZMQError \(code) (\(ZMQError.message(for: code))), got success", sourceLocation: sourceLocation)
        return nil
    } catch let error as ZMQError {
        #expect(error.code == code, "got \(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected ZMQError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

