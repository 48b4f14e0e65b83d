import Glibc
import SystemCalls

/// Whole-line writes to stdout and stderr with `write(2)`: nothing waits in a buffer, and lines
/// written from different threads never interleave.
public enum StandardStream {
    /// Writes all of `text` to file descriptor `descriptor` (1 stdout, 2 stderr), retrying
    /// interrupted and partial writes; gives up silently when the stream is gone.
    public static func write(_ text: String, to descriptor: Int32) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let result = retryingInterrupts("write") {
                    Glibc.write(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                }
                guard case .success(let written) = result, written > 0 else { return }
                offset += written
            }
        }
    }
}
