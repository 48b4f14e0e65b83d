import ZeroMQ

extension ZMQSocket {
    /// The next message's frames, or `nil` once `deadline` has passed.
    ///
    /// Between tries it sleeps as a task (2 ms) instead of blocking in a poll: a test that blocks
    /// a cooperative thread for seconds starves every other test of a parallel run.
    package func receiveMultipart(before deadline: ContinuousClock.Instant) async throws -> [[UInt8]]? {
        while true {
            if let frames = try tryReceiveMultipart() { return frames }
            guard ContinuousClock.now < deadline else { return nil }
            try await Task.sleep(for: .milliseconds(2))
        }
    }
}
