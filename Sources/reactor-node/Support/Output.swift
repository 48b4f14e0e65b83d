import Glibc

/// Data to stdout and messages to stderr, one whole line per `write(2)`: nothing waits in a
/// buffer, so pipes and container logs see every line as it is written, and lines from
/// different threads never interleave.
enum Output {
    /// Writes one line of data to stdout.
    static func line(_ text: String) { write(text + "\n", to: 1) }

    /// Writes one line to stderr (usage and fatal errors; events go through the logger).
    static func error(_ text: String) { write(text + "\n", to: 2) }

    private static func write(_ text: String, to descriptor: Int32) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}
