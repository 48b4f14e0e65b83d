import SystemCalls
import ZeroMQ

extension Mailbox {
    /// Creates a mailbox for a node's loop thread.
    ///
    /// A mailbox is a pipe, so its constructor fails with a `SystemCallError`. The node APIs
    /// (`AuthorityNode.init`, `WorkerNode.start()`, `ActionClient.init`, ...) document
    /// `throws(ZMQError)` for every failure to set up their I/O, and have always reported
    /// descriptors running out here as `ZMQError(code: errno, function: "pipe")`; this is the one
    /// place that keeps that promise, so the public API and the CLI's messages stay as they were.
    static func forNode() throws(ZMQError) -> Mailbox {
        do throws(SystemCallError) {
            return try Mailbox()
        } catch {
            throw ZMQError(code: error.code, function: error.function)
        }
    }
}
