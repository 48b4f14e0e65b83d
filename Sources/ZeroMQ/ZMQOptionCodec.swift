import CZMQ

/// How one option's Swift value maps to the bytes `zmq_setsockopt` / `zmq_getsockopt` exchange.
struct ZMQOptionCodec<Value>: Sendable {
    /// Buffer size handed to `zmq_getsockopt`.
    let capacity: Int
    /// The option value as passed to `zmq_setsockopt`.
    let encode: @Sendable (Value) throws(ZMQError) -> [UInt8]
    /// The value from the bytes `zmq_getsockopt` filled in.
    let decode: @Sendable (UnsafeRawBufferPointer) throws(ZMQError) -> Value
}

extension ZMQOptionCodec where Value == Int {
    /// A C `int` option; values outside `Int32` are rejected with `EINVAL`.
    static var int32: Self {
        Self(capacity: 4, encode: { value throws(ZMQError) in
            guard let narrow = Int32(exactly: value) else {
                throw ZMQError(code: EINVAL, function: "zmq_setsockopt")
            }
            return nativeBytes(of: narrow)
        }, decode: { buffer throws(ZMQError) in
            Int(try load(Int32.self, from: buffer))
        })
    }
}

extension ZMQOptionCodec where Value == Int64 {
    /// A C `int64_t` option.
    static var int64: Self {
        Self(capacity: 8, encode: { value in nativeBytes(of: value) }, decode: { buffer throws(ZMQError) in
            try load(Int64.self, from: buffer)
        })
    }
}

extension ZMQOptionCodec where Value == Bool {
    /// A C `int` option used as a flag (0 or 1).
    static var bool: Self {
        Self(capacity: 4, encode: { value in nativeBytes(of: Int32(value ? 1 : 0)) }, decode: { buffer throws(ZMQError) in
            try load(Int32.self, from: buffer) != 0
        })
    }
}

extension ZMQOptionCodec where Value == [UInt8] {
    /// A binary option of at most `capacity` bytes.
    static func bytes(capacity: Int) -> Self {
        Self(capacity: capacity, encode: { $0 }, decode: { Array($0) })
    }
}

extension ZMQOptionCodec where Value == String {
    /// A text option; libzmq reports its terminating NUL, which is dropped.
    static func string(capacity: Int) -> Self {
        Self(capacity: capacity, encode: { Array($0.utf8) }, decode: { buffer in
            var end = buffer.count
            while end > 0 && buffer[end - 1] == 0 { end -= 1 }
            return String(decoding: UnsafeRawBufferPointer(rebasing: buffer[0..<end]), as: UTF8.self)
        })
    }
}

extension ZMQOptionCodec where Value == ZMQSocketType {
    /// The read-only `ZMQ_TYPE` option.
    static var socketType: Self {
        Self(capacity: 4, encode: { value in nativeBytes(of: value.rawValue) }, decode: { buffer throws(ZMQError) in
            guard let type = ZMQSocketType(rawValue: try load(Int32.self, from: buffer)) else {
                throw ZMQError(code: EINVAL, function: "zmq_getsockopt")
            }
            return type
        })
    }
}

/// The native-endian bytes of a fixed-size integer.
private func nativeBytes<T: FixedWidthInteger>(of value: T) -> [UInt8] {
    withUnsafeBytes(of: value) { Array($0) }
}

/// Reads a fixed-size integer, requiring libzmq to have filled exactly its size.
private func load<T: FixedWidthInteger>(_: T.Type, from buffer: UnsafeRawBufferPointer) throws(ZMQError) -> T {
    guard buffer.count == MemoryLayout<T>.size else {
        throw ZMQError(code: EINVAL, function: "zmq_getsockopt")
    }
    return buffer.loadUnaligned(as: T.self)
}
