import CZMQ

extension ZMQSocket {
    /// Receives one whole multipart message, blocking until it arrives (or the receive timeout expires).
    ///
    /// Frames come back in order, each of any size (libzmq allocates; there is no fixed buffer).
    /// - Throws: ``ZMQError``: `EAGAIN` when ``ZMQSocketOption/receiveTimeout`` expires,
    ///   `ETERM` when the context is shut down, `EFSM`, `ENOTSOCK`.
    package func receiveMultipart() throws(ZMQError) -> [[UInt8]] {
        guard let frames = try receiveMultipart(flags: 0) else {
            throw ZMQError(code: EAGAIN, function: "zmq_msg_recv")
        }
        return frames
    }

    /// Receives one whole multipart message if one is waiting; `nil` instead of blocking.
    ///
    /// - Throws: ``ZMQError`` for failures other than would-block (`ETERM`, `EFSM`, `ENOTSOCK`).
    package func tryReceiveMultipart() throws(ZMQError) -> [[UInt8]]? {
        try receiveMultipart(flags: ZMQ_DONTWAIT)
    }

    /// Zero-copy receive: hands every frame of one message to `body` while libzmq still owns it.
    ///
    /// `body` gets the frame bytes, the frame's index in the message and whether more frames
    /// follow. The buffer is valid only during that call; copy what you keep. If `body` throws,
    /// the rest of the message is discarded (so the next receive starts on a message boundary)
    /// and the error is rethrown.
    /// - Parameter wait: `true` blocks until a message arrives; `false` returns at once.
    /// - Returns: `true` after a message was handled; `false` when nothing was waiting
    ///   (`wait: false`) or the receive timeout expired (`wait: true`).
    /// - Throws: ``ZMQError`` (`ETERM`, `EFSM`, `ENOTSOCK`) or whatever `body` throws.
    package func receiveFrames(
        wait: Bool = true,
        _ body: (_ frame: UnsafeRawBufferPointer, _ index: Int, _ more: Bool) throws -> Void
    ) throws -> Bool {
        var index = 0
        var flags = wait ? 0 : ZMQ_DONTWAIT
        while true {
            guard let more = try receiveFrame(flags: flags) else {
                if index == 0 { return false }
                throw ZMQError(code: EAGAIN, function: "zmq_msg_recv")
            }
            do {
                try body(frameBytes, index, more)
            } catch {
                zmq_msg_close(message)
                if more { discardRestOfMessage() }
                throw error
            }
            zmq_msg_close(message)
            if !more { return true }
            index += 1
            flags = 0
        }
    }

    /// Collects the frames of one message; `nil` if `flags` has `ZMQ_DONTWAIT` and none is waiting.
    ///
    /// Reads into ``lastMessage``'s arrays when the caller no longer holds them (a loop that
    /// handles each message before it receives the next): a routed message cost an array for
    /// the message and one per frame after the routing id, an allocation and a release each, and
    /// a message of a few KiB also made glibc consolidate its free lists. Arrays the caller still
    /// holds are copied on write as usual; a frame's array larger than ``reusedFrameBytes`` is
    /// not kept, so one large message does not hold its memory until the next.
    private func receiveMultipart(flags firstFlags: Int32) throws(ZMQError) -> [[UInt8]]? {
        var frames: [[UInt8]] = []
        swap(&frames, &lastMessage)
        var count = 0
        var flags = firstFlags
        while true {
            guard let more = try receiveFrame(flags: flags) else {
                guard count == 0 else { throw ZMQError(code: EAGAIN, function: "zmq_msg_recv") }
                lastMessage = frames
                return nil
            }
            let bytes = frameBytes
            if count == 0 {
                let first = firstFrame(bytes)
                if frames.isEmpty { frames.append(first) } else { frames[0] = first }
            } else if count < frames.count {
                frames[count].removeAll(keepingCapacity: true)
                frames[count].append(contentsOf: bytes)
            } else {
                // Room for a routed message (id, header, payload) without growing the array twice.
                if frames.capacity < 4 { frames.reserveCapacity(4) }
                frames.append(Array(bytes))
            }
            count += 1
            zmq_msg_close(message)
            if !more { break }
            // The rest of a multipart message is already queued: libzmq delivers messages atomically.
            flags = 0
        }
        if frames.count > count { frames.removeSubrange(count...) }
        // Kept for the next message, except frames too large to hold on to.
        if frames.contains(where: { $0.capacity > Self.reusedFrameBytes }) {
            lastMessage = frames.filter { $0.capacity <= Self.reusedFrameBytes }
        } else {
            lastMessage = frames
        }
        return frames
    }

    /// The largest frame array kept for the next message: 64 KiB.
    static var reusedFrameBytes: Int { 65_536 }

    /// A message's first frame: ``lastFirstFrame`` itself when the bytes are the same (a ROUTER
    /// peer's routing id, message after message), else a new array, remembered when short.
    @inline(__always)
    private func firstFrame(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        guard bytes.count <= 32 else { return Array(bytes) }
        if lastFirstFrame.count == bytes.count, lastFirstFrame.withUnsafeBytes({ $0.elementsEqual(bytes) }) { return lastFirstFrame }
        lastFirstFrame = Array(bytes)
        return lastFirstFrame
    }

    /// Receives one frame into the reused ``message`` storage and returns its "more" flag,
    /// or `nil` on `EAGAIN`. On success the caller reads ``frameBytes`` and must `zmq_msg_close`.
    @inline(__always)
    private func receiveFrame(flags: Int32) throws(ZMQError) -> Bool? {
        let handle = try openHandle("zmq_msg_recv")
        zmq_msg_init(message)
        do {
            guard try zmqCallUnlessWouldBlock("zmq_msg_recv", { zmq_msg_recv(message, handle, flags) }) != nil else {
                zmq_msg_close(message)
                return nil
            }
        } catch {
            zmq_msg_close(message)
            throw error
        }
        return zmq_msg_more(message) != 0
    }

    /// The bytes of the frame currently held in ``message``.
    @inline(__always)
    private var frameBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: zmq_msg_data(message), count: zmq_msg_size(message))
    }

    /// Reads and drops the remaining frames of a partly consumed message.
    private func discardRestOfMessage() {
        while let more = try? receiveFrame(flags: 0) {
            zmq_msg_close(message)
            if !more { return }
        }
    }
}
