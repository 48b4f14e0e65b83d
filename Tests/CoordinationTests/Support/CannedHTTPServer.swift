import Foundation
import Glibc
import Synchronization

/// An HTTP server on loopback that answers every request with the same canned response, for
/// answers etcd never sends. One thread; stopped and joined by ``stop()``.
final class CannedHTTPServer: Sendable {
    let port: UInt16
    private let descriptor: Int32
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    /// How many requests it answered.
    private let answered = Atomic<Int>(0)

    init(status: Int, body: String) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && listen(descriptor, 16) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard descriptor >= 0, ready else { throw CannedServerError() }
        self.descriptor = descriptor
        port = UInt16(bigEndian: address.sin_port)
        let response = Array("HTTP/1.1 \(status) Canned\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)".utf8)
        Thread.detachNewThread { [self] in serve(response) }
    }

    var url: String { "http://127.0.0.1:\(port)" }
    var requests: Int { answered.load(ordering: .relaxed) }

    private func serve(_ response: [UInt8]) {
        defer { finished.signal() }
        while !stopping.load(ordering: .relaxed) {
            var item = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&item, 1, 20) > 0 else { continue }
            let connection = accept(descriptor, nil, nil)
            guard connection >= 0 else { continue }
            // Reads the head and the body (every request here has a Content-Length and a small body).
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4_096)
            while !Self.complete(received) {
                let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                received += buffer[..<count]
            }
            // Counted before the answer goes: the client may look as soon as it has it.
            answered.add(1, ordering: .relaxed)
            _ = response.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(connection)
        }
    }

    private static func complete(_ bytes: [UInt8]) -> Bool {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { return false }
        let head = text[..<split.lowerBound].lowercased()
        let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        return text.utf8.count - text.utf8.distance(from: text.utf8.startIndex, to: split.upperBound) >= length
    }

    func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        finished.wait()
        close(descriptor)
    }

    deinit { stop() }
}

struct CannedServerError: Error {}
