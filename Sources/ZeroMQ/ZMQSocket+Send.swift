import CZMQ

extension ZMQSocket {
    /// Sends one frame, blocking until libzmq accepts it (or the send timeout expires).
    ///
    /// `more: true` marks the frame as part of a multipart message that continues with the next
    /// send; libzmq delivers a multipart message atomically and in order, or not at all.
    /// - Throws: ``ZMQError``: `EAGAIN` when ``ZMQSocketOption/sendTimeout`` expires,
    ///   `EHOSTUNREACH` for an unroutable mandatory ROUTER, `EFSM`, `ETERM`, `ENOTSOCK`.
    @inline(__always)
    package func send(_ frame: [UInt8], more: Bool = false) throws(ZMQError) {
        if try !sendFrame(frame, flags: more ? ZMQ_SNDMORE : 0) { throw ZMQError(code: EAGAIN, function: "zmq_send") }
    }

    /// Sends a frame straight from caller memory, blocking; libzmq copies it once into its message.
    ///
    /// The buffer only has to stay valid for the duration of the call. Same errors as the array form of `send(_:more:)`.
    @inline(__always)
    package func send(_ buffer: UnsafeRawBufferPointer, more: Bool = false) throws(ZMQError) {
        if try !sendFrame(buffer, flags: more ? ZMQ_SNDMORE : 0) {
            throw ZMQError(code: EAGAIN, function: "zmq_send")
        }
    }

    /// Sends all frames as one multipart message, blocking. An empty array sends nothing.
    ///
    /// Once libzmq has queued the first frame, the pipe takes the rest (its high-water mark
    /// counts whole messages), so a failure part-way is in practice only `ETERM`/`ENOTSOCK`,
    /// after which the incomplete message is never delivered.
    /// - Throws: ``ZMQError`` as for `send(_:more:)`.
    package func send(_ frames: [[UInt8]]) throws(ZMQError) {
        let last = frames.count - 1
        for (index, frame) in frames.enumerated() {
            try send(frame, more: index < last)
        }
    }

    /// Sends one frame without blocking; returns `false` when libzmq cannot take it right now.
    ///
    /// - Returns: `true` when queued, `false` on would-block (high-water mark reached, no peer,
    ///   or a mandatory ROUTER whose peer's pipe is full).
    /// - Throws: ``ZMQError`` for every other failure (`EHOSTUNREACH`, `EFSM`, `ETERM`, `ENOTSOCK`).
    @inline(__always)
    package func trySend(_ frame: [UInt8], more: Bool = false) throws(ZMQError) -> Bool {
        try sendFrame(frame, flags: ZMQ_DONTWAIT | (more ? ZMQ_SNDMORE : 0))
    }

    /// Sends one frame from caller memory without blocking; `false` on would-block.
    @inline(__always)
    package func trySend(_ buffer: UnsafeRawBufferPointer, more: Bool = false) throws(ZMQError) -> Bool {
        try sendFrame(buffer, flags: ZMQ_DONTWAIT | (more ? ZMQ_SNDMORE : 0))
    }

    /// Sends a multipart message without blocking; `false` (nothing sent) on would-block.
    ///
    /// Would-block is decided on the first frame: once libzmq accepts it, the rest of the
    /// message goes to the same pipe, whose high-water mark counts whole messages, so later
    /// frames do not block. A would-block after the first frame is reported as `EAGAIN`.
    package func trySend(_ frames: [[UInt8]]) throws(ZMQError) -> Bool {
        let last = frames.count - 1
        for (index, frame) in frames.enumerated() {
            let sent = try trySend(frame, more: index < last)
            if !sent {
                if index == 0 { return false }
                throw ZMQError(code: EAGAIN, function: "zmq_send")
            }
        }
        return true
    }

    /// Sends `first`, then `last` from caller memory, as one two-frame message without blocking
    /// (a routing id and a header packed in place); `false` (nothing sent) on would-block, which
    /// is decided on the first frame as for a frames array. `last` only has to stay valid for
    /// the call.
    package func trySend(_ first: [UInt8], last: UnsafeRawBufferPointer) throws(ZMQError) -> Bool {
        guard try sendFrame(first, flags: ZMQ_DONTWAIT | ZMQ_SNDMORE) else { return false }
        guard try sendFrame(last, flags: ZMQ_DONTWAIT) else { throw ZMQError(code: EAGAIN, function: "zmq_send") }
        return true
    }

    /// The single send primitive: `zmq_send` builds the message on its stack and copies the
    /// bytes once (no Swift-side buffer); returns `false` when libzmq reports `EAGAIN`.
    @inline(__always)
    func sendFrame(_ bytes: UnsafeRawBufferPointer, flags: Int32) throws(ZMQError) -> Bool {
        let handle = try openHandle("zmq_send")
        return try zmqCallUnlessWouldBlock("zmq_send") {
            zmq_send(handle, bytes.baseAddress, bytes.count, flags)
        } != nil
    }

    /// The raw-buffer `sendFrame(_:flags:)` over an array's contiguous storage.
    @inline(__always)
    func sendFrame(_ frame: [UInt8], flags: Int32) throws(ZMQError) -> Bool {
        // `withUnsafeBytes` is untyped-rethrows; carry the typed error out through a Result.
        let result = frame.withUnsafeBytes { bytes in
            Result { () throws(ZMQError) -> Bool in try sendFrame(bytes, flags: flags) }
        }
        return try result.get()
    }
}
