import Glibc

/// This machine's host name, as `gethostname(2)` reports it.
package enum HostName {
    /// The host name, or `nil` when it cannot be read or is empty.
    package static func current() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? nil : name
    }
}
