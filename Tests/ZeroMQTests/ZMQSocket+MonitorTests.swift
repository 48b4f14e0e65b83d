import Foundation
import Testing
@testable import ZeroMQ

/// Monitors and the context's I/O thread: libzmq sends monitor events with a blocking send, so
/// a monitor must be stopped before its reader is closed.
@Suite struct ZMQSocketMonitorTests {
    /// Waits (at most 5 s) for a message on `socket`.
    func receive(_ socket: ZMQSocket) throws -> [[UInt8]]? {
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            if let frames = try socket.tryReceiveMultipart() { return frames }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return nil
    }

    @Test func aStoppedMonitorsClosedReaderLeavesTheContextWorking() throws {
        let context = try ZMQContext(ioThreads: 1)
        defer { context.terminate(timeout: .seconds(2)) }
        let server = try ZMQSocket(context: context, type: .router)
        try server.bind("tcp://127.0.0.1:*")
        let endpoint = try server.get(.lastEndpoint)
        let reader = try server.monitor([.accepted, .disconnected], name: "monitor-test-\(UUID().uuidString)")
        let peer = try ZMQSocket(context: context, type: .dealer)
        try peer.connect(endpoint)
        try peer.send([1])
        #expect(try receive(server) != nil)
        server.stopMonitor()
        reader.close()
        // The peer goes away: libzmq's I/O thread notices the disconnection. With the monitor
        // still on, its event would block that thread for good.
        peer.close()
        let other = try ZMQSocket(context: context, type: .dealer)
        defer { other.close() }
        try other.connect(endpoint)
        try other.send([2])
        #expect(try receive(server)?.last == [2], "the context's I/O thread still moves messages")
        server.close()
    }
}
