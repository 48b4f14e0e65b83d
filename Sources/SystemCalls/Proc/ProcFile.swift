#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Small text files of Linux's `/proc`, read whole with `open(2)` and `read(2)`.
///
/// Their size is not known ahead (`stat(2)` says 0), so the file is read until `read` returns
/// nothing; a file that is gone (a process that exited) reads as `nil`, like any other failure.
package enum ProcFile {
    /// The text of `path`, or `nil` when it cannot be opened or read.
    package static func text(_ path: String) -> String? {
        guard case .success(let descriptor) = retryingInterrupts("open", { open(path, O_RDONLY | O_CLOEXEC) }) else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4_096)
        while true {
            let count = chunk.withUnsafeMutableBytes { buffer in
                retryingInterrupts("read") { read(descriptor, buffer.baseAddress, buffer.count) }
            }
            guard case .success(let read) = count else { return nil }
            if read == 0 { break }
            bytes += chunk[..<read]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The numeric entries of `/proc` (or of `root`): the processes alive when it is listed.
    package static func processIDs(root: String = "/proc") -> [pid_t] {
        guard let directory = opendir(root) else { return [] }
        defer { closedir(directory) }
        var identifiers: [pid_t] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let identifier = pid_t(name), identifier > 0 { identifiers.append(identifier) }
        }
        return identifiers
    }
}
