import Foundation
import Glibc

/// A real single-member etcd (`/usr/bin/etcd`, Debian's `etcd-server`) on loopback, for tests:
/// its own free client and peer ports, its data in a temporary directory, started with a bounded
/// wait until it answers and always stopped and reaped (``ChildProcess`` kills it when dropped).
///
/// It runs with a 50 ms heartbeat and a 500 ms election timeout, so that it starts fast and
/// grants leases as short as 1 s (etcd's minimum TTL is one and a half election timeouts).
package final class EtcdServer: Sendable {
    /// The client URL, `http://127.0.0.1:PORT`.
    package let clientURL: String
    /// The client port.
    package let clientPort: UInt16
    /// The etcd process.
    package let process: ChildProcess
    private let dataDirectory: String

    /// The etcd binary.
    package static let executable = "/usr/bin/etcd"

    private init(clientPort: UInt16, process: ChildProcess, dataDirectory: String) {
        self.clientPort = clientPort
        clientURL = "http://127.0.0.1:\(clientPort)"
        self.process = process
        self.dataDirectory = dataDirectory
    }

    /// Starts etcd and waits until `/health` reports it healthy (it has elected itself); throws
    /// when it does not within `timeout` (trying new ports when another process took its ports).
    package static func start(name: String = "etcd", timeout: Duration = promptly) async throws -> EtcdServer {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw ChildProcessError("\(executable) is missing: install Debian's etcd-server (scripts/ensure-deps.sh)")
        }
        let deadline = ContinuousClock.now + timeout
        var lastFailure = ""
        for _ in 0..<3 {
            let ports = try LoopbackPort.free(2)
            let template = NSTemporaryDirectory() + "etcd-\(getpid())-XXXXXX"
            var path = Array(template.utf8CString)
            guard mkdtemp(&path) != nil else { throw ChildProcessError("mkdtemp: \(String(cString: strerror(errno)))") }
            let dataDirectory = String(decoding: path.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let client = "http://127.0.0.1:\(ports[0])"
            let peer = "http://127.0.0.1:\(ports[1])"
            let process = try ChildProcess(executable: executable, arguments: [
                "--name", name, "--data-dir", dataDirectory + "/data",
                "--listen-client-urls", client, "--advertise-client-urls", client,
                "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                "--initial-cluster", "\(name)=\(peer)", "--initial-cluster-state", "new",
                "--heartbeat-interval", "50", "--election-timeout", "500",
            ], name: name, launcher: ChildProcess.parentDeathLauncher)
            let server = EtcdServer(clientPort: ports[0], process: process, dataDirectory: dataDirectory)
            while ContinuousClock.now < deadline && process.isRunning {
                if let answer = RawHTTPClient.exchange(port: ports[0], "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
                                                       timeoutMilliseconds: 1_000),
                   answer.status == 200, answer.body.contains("\"health\":\"true\"") {
                    return server
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            lastFailure = process.logTail()
            await server.stop()
            guard ContinuousClock.now < deadline else { break }
        }
        throw ChildProcessError("etcd did not become healthy within \(timeout):\n\(lastFailure)")
    }

    /// Kills etcd at once (SIGKILL) and reaps it: a crash, as its clients see it.
    package func kill() async {
        process.signal(SIGKILL)
        await process.waitForExit(timeout: .seconds(5))
    }

    /// Stops etcd (SIGTERM, SIGKILL after 5 s), reaps it, and removes its data.
    package func stop() async {
        await process.stop()
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }

    deinit {
        // Killed before its data goes (ChildProcess would kill it only after this body).
        process.signal(SIGKILL)
        while process.reap() == nil { usleep(1_000) }
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }
}
