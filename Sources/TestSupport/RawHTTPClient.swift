import Foundation
import Glibc

/// A TCP client that sends raw bytes and reads what comes back, with deadlines: for requests no
/// HTTP library would send, and for clients that send nothing at all.
package final class RawHTTPClient {
    let descriptor: Int32

    /// Connects to 127.0.0.1:`port`; `nil` if the connection is refused.
    package init?(port: UInt16) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Sends `text` as it is (no framing, no line endings added).
    package func send(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Everything read until the server closes the connection, or `nil` if it is still open
    /// after `timeoutMilliseconds`.
    package func readUntilClosed(timeoutMilliseconds: Int32 = 5_000) -> String? {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        let deadline = Self.now() + Int64(timeoutMilliseconds)
        while true {
            let left = deadline - Self.now()
            guard left > 0 else { return nil }
            var item = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&item, 1, Int32(left)) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += buffer[..<count]
            } else if count == 0 || errno == ECONNRESET {
                return String(decoding: received, as: UTF8.self)
            } else if errno != EINTR && errno != EAGAIN {
                return String(decoding: received, as: UTF8.self)
            }
        }
    }

    /// What was read once it satisfies `done`, or everything read within `milliseconds`: for an
    /// answer that stays open, awaited with a deadline rather than a fixed wait.
    package func read(withinMilliseconds milliseconds: Int32, until done: (String) -> Bool) -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        let deadline = Self.now() + Int64(milliseconds)
        while true {
            let left = deadline - Self.now()
            guard left > 0 else { break }
            var item = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&item, 1, Int32(left)) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += buffer[..<count]
                if done(String(decoding: received, as: UTF8.self)) { break }
            } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                break
            }
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Sends a whole request and returns the whole answer (the request asks the server to close).
    package static func exchange(port: UInt16, _ request: String, timeoutMilliseconds: Int32 = 5_000) -> HTTPAnswer? {
        guard let client = RawHTTPClient(port: port) else { return nil }
        client.send(request)
        return client.readUntilClosed(timeoutMilliseconds: timeoutMilliseconds).map(HTTPAnswer.init)
    }

    /// Monotonic milliseconds, for deadlines.
    package static func now() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000 + Int64(now.tv_nsec) / 1_000_000
    }
}

/// A response as read off the socket: status, headers (names lower-cased), body.
package struct HTTPAnswer: Sendable {
    package let raw: String
    package var status: Int?
    package var headers: [String: String] = [:]
    package var body = ""

    package init(_ raw: String) {
        self.raw = raw
        guard let split = raw.range(of: "\r\n\r\n") else { return }
        let head = raw[..<split.lowerBound].components(separatedBy: "\r\n")
        body = String(raw[split.upperBound...])
        status = head.first.flatMap { $0.split(separator: " ").dropFirst().first.flatMap { Int($0) } }
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
    }
}
