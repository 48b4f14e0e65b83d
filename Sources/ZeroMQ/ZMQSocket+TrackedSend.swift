import CZMQ

/// What runs when libzmq lets go of a tracked or lent frame, kept alive by the message until then.
///
/// Crosses threads only through libzmq's `hint` pointer: built on the sending thread, then taken
/// exactly once by the free function (on whichever thread libzmq runs it); its fields are
/// immutable, `owner` is `Sendable` and `onRelease` is `@Sendable`, so no state is shared.
private final class FrameRelease {
    /// The copy made for libzmq, freed here; `nil` for lent bytes.
    let copy: UnsafeMutableRawPointer?
    /// What keeps lent bytes alive and unchanged until libzmq lets go of them.
    let owner: (any AnyObject & Sendable)?
    let onRelease: (@Sendable () -> Void)?

    init(copy: UnsafeMutableRawPointer?, owner: (any AnyObject & Sendable)?, onRelease: (@Sendable () -> Void)?) {
        self.copy = copy
        self.owner = owner
        self.onRelease = onRelease
    }
}

/// libzmq's free function for tracked and lent frames: frees the copy (or lets go of the lent
/// bytes' owner) and reports the release. It may run on any thread (a libzmq I/O thread once the
/// frame is written to the kernel or dropped, or the sending thread when libzmq refuses or drops
/// it at once).
private let releaseTrackedFrame: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { _, hint in
    guard let hint else { return }
    let release = Unmanaged<FrameRelease>.fromOpaque(hint).takeRetainedValue()
    release.copy?.deallocate()
    release.onRelease?()
}

extension ZMQSocket {
    /// Sends a multipart message without blocking, and reports when libzmq no longer holds it.
    ///
    /// The last frame (in practice the large one) is copied once into a buffer handed to libzmq
    /// with `zmq_msg_init_data`; libzmq frees it when the message has left its queue: written to
    /// the kernel, dropped (peer gone, unroutable, socket closed) or refused here. `onRelease`
    /// runs exactly once in every case, including when this call returns `false` or throws, and it
    /// may run on a libzmq I/O thread or on this one before the call returns: it must be
    /// thread-safe and quick. The other frames are copied as by ``trySend(_:)-([[UInt8]])``.
    ///
    /// This lets a caller bound the bytes it has queued towards one peer, which libzmq's
    /// high-water mark (counted in messages) cannot.
    /// - Returns: `true` when queued, `false` (nothing sent) on would-block.
    /// - Throws: ``ZMQError`` as for ``trySend(_:)-([[UInt8]])``.
    package func trySend(_ frames: [[UInt8]], onRelease: @escaping @Sendable () -> Void) throws(ZMQError) -> Bool {
        guard let lastFrame = frames.last else {
            onRelease()
            return true
        }
        let data = UnsafeMutableRawPointer.allocate(byteCount: max(1, lastFrame.count), alignment: 1)
        lastFrame.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress { data.copyMemory(from: base, byteCount: bytes.count) }
        }
        return try trySend(frames.dropLast(), last: data, count: lastFrame.count, release: FrameRelease(copy: data, owner: nil, onRelease: onRelease))
    }

    /// Sends `head` and then `last` as one multipart message without blocking, lending libzmq the
    /// last frame's bytes instead of copying them: a message of tens of megabytes leaves at
    /// the cost of a small one. libzmq reads `last` in place until it has written it to the
    /// kernel or dropped it; `owner` must keep that memory alive and unchanged, and is held
    /// (with a reference) until then. `onRelease` as for ``trySend(_:onRelease:)``.
    /// - Returns: `true` when queued, `false` (nothing sent) on would-block.
    /// - Throws: ``ZMQError`` as for ``trySend(_:)-([[UInt8]])``.
    package func trySend(_ head: [[UInt8]], lending last: UnsafeRawBufferPointer, keptAliveBy owner: some AnyObject & Sendable,
                         onRelease: (@Sendable () -> Void)? = nil) throws(ZMQError) -> Bool {
        guard let base = last.baseAddress, !last.isEmpty else {
            // Nothing to lend: an empty frame is copied as any other.
            return try trySend(head + [[]], onRelease: { onRelease?() })
        }
        return try trySend(head[...], last: UnsafeMutableRawPointer(mutating: base), count: last.count,
                           release: FrameRelease(copy: nil, owner: owner, onRelease: onRelease))
    }

    /// Sends `head`, then a last frame of `count` bytes at `data` that libzmq reads in place and
    /// gives back through `release`, which runs exactly once in every case.
    private func trySend(_ head: ArraySlice<[UInt8]>, last data: UnsafeMutableRawPointer, count: Int, release: FrameRelease) throws(ZMQError) -> Bool {
        let hint = Unmanaged.passRetained(release).toOpaque()
        let handle: UnsafeMutableRawPointer
        do {
            handle = try openHandle("zmq_msg_send")
        } catch {
            releaseTrackedFrame(data, hint)
            throw error
        }
        var tracked = zmq_msg_t()
        // Cannot fail for a non-null buffer (libzmq only fails to allocate its small header, and then aborts).
        zmq_msg_init_data(&tracked, data, count, releaseTrackedFrame, hint)
        // From here on the message owns the buffer and the release: closing it runs the release,
        // and every path that does not hand it to libzmq closes it exactly once.
        for (offset, frame) in head.enumerated() {
            let sent: Bool
            do {
                sent = try sendFrame(frame, flags: ZMQ_DONTWAIT | ZMQ_SNDMORE)
            } catch {
                zmq_msg_close(&tracked)
                throw error
            }
            if sent { continue }
            // Frames sent with SNDMORE are never delivered on their own.
            zmq_msg_close(&tracked)
            if offset == 0 { return false }
            throw ZMQError(code: EAGAIN, function: "zmq_send")
        }
        let flags = ZMQ_DONTWAIT
        let sent: Int32?
        do {
            sent = try zmqCallUnlessWouldBlock("zmq_msg_send") { zmq_msg_send(&tracked, handle, flags) }
        } catch {
            zmq_msg_close(&tracked)
            throw error
        }
        guard sent != nil else {
            zmq_msg_close(&tracked)
            if head.isEmpty { return false }
            throw ZMQError(code: EAGAIN, function: "zmq_msg_send")
        }
        // Sent: libzmq took the message and left `tracked` empty.
        return true
    }
}
