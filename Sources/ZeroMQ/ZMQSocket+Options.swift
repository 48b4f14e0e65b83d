import CZMQ

extension ZMQSocket {
    /// Sets a socket option, e.g. `try socket.set(.linger, 0)`.
    ///
    /// Most options apply to connections made after the call; set them before `bind`/`connect`.
    /// - Throws: ``ZMQError`` with `EINVAL` for a value libzmq rejects, `ENOTSOCK` once closed.
    package func set<Value>(_ option: ZMQSocketOption<Value>, _ value: Value) throws(ZMQError) {
        try setOption(option.code, option.codec, value)
    }

    /// Sets an option that libzmq cannot report back, e.g. `try socket.set(.subscribe, "topic")`.
    ///
    /// - Throws: ``ZMQError`` with `EINVAL` for a value or socket type libzmq rejects, `ENOTSOCK` once closed.
    package func set<Value>(_ option: ZMQWriteOnlySocketOption<Value>, _ value: Value) throws(ZMQError) {
        try setOption(option.code, option.codec, value)
    }

    /// Reads the value libzmq currently holds for an option.
    ///
    /// - Throws: ``ZMQError`` with `EINVAL` if libzmq cannot report it, `ENOTSOCK` once closed.
    package func get<Value>(_ option: ZMQSocketOption<Value>) throws(ZMQError) -> Value {
        try getOption(option.code, option.codec)
    }

    /// Reads a read-only option such as ``ZMQReadOnlySocketOption/lastEndpoint``.
    ///
    /// - Throws: ``ZMQError`` with `ENOTSOCK` once closed.
    package func get<Value>(_ option: ZMQReadOnlySocketOption<Value>) throws(ZMQError) -> Value {
        try getOption(option.code, option.codec)
    }

    private func setOption<Value>(_ code: Int32, _ codec: ZMQOptionCodec<Value>, _ value: Value) throws(ZMQError) {
        let handle = try openHandle("zmq_setsockopt")
        let bytes = try codec.encode(value)
        try zmqCall("zmq_setsockopt") { zmq_setsockopt(handle, code, bytes, bytes.count) }
    }

    private func getOption<Value>(_ code: Int32, _ codec: ZMQOptionCodec<Value>) throws(ZMQError) -> Value {
        let handle = try openHandle("zmq_getsockopt")
        var storage = [UInt8](repeating: 0, count: codec.capacity)
        var size = codec.capacity
        try zmqCall("zmq_getsockopt") { zmq_getsockopt(handle, code, &storage, &size) }
        let result = storage.withUnsafeBytes { buffer in
            Result { () throws(ZMQError) -> Value in
                try codec.decode(UnsafeRawBufferPointer(rebasing: buffer[0..<min(size, buffer.count)]))
            }
        }
        return try result.get()
    }
}
