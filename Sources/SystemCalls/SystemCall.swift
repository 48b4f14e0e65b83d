#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a POSIX call that reports failure as a negative result and `errno`, and runs it again
/// for as long as it fails with `EINTR` (a signal arrived before it did anything).
///
/// The one place in the package that retries interrupted system calls; libzmq calls have their
/// own (`zmqCall` in the ZeroMQ module, which reads `zmq_errno()`). Each layer turns the failure
/// into its own error: storage into `PersistenceError.io`, the mailbox into ``SystemCallError``,
/// the log writer into silence.
///
/// - Parameters:
///   - function: the name of the call, kept in the error (`"pwrite"`, `"flock"`, ...).
///   - body: the call; runs at least once, on the calling thread.
/// - Returns: the call's non-negative result, or the `errno` it failed with (never `EINTR`).
@inline(__always)
package func retryingInterrupts<Value: SignedInteger>(
    _ function: StaticString, _ body: () -> Value
) -> Result<Value, SystemCallError> {
    while true {
        let result = body()
        if result >= 0 { return .success(result) }
        let code = errno
        if code == EINTR { continue }
        return .failure(SystemCallError(code: code, function: function))
    }
}

/// A failed POSIX call: its `errno` and its name.
package struct SystemCallError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The `errno` value the call failed with (`EMFILE`, `ENOSPC`, `EWOULDBLOCK`, ...).
    package let code: Int32
    /// The call that failed, e.g. `"pipe"`.
    package let function: String

    /// Creates an error from an `errno` value and the name of the failing call.
    package init(code: Int32, function: StaticString) {
        self.code = code
        self.function = String(describing: function)
    }

    /// Text such as `pipe: Too many open files (errno 24)`, from `strerror`.
    package var description: String {
        "\(function): \(String(cString: strerror(code))) (errno \(code))"
    }
}
