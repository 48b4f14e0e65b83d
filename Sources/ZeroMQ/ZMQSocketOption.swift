/// A typed key for a socket option that can be both set and read back.
///
/// Use the static members, e.g. `try socket.set(.linger, 100)` and `try socket.get(.linger)`.
/// Options that exist in a binary and a text form (CURVE keys) are overloaded on `Value`;
/// annotate the result type when reading them: `let key: String = try socket.get(.curvePublicKey)`.
package struct ZMQSocketOption<Value>: Sendable, CustomStringConvertible {
    /// The libzmq option constant (`ZMQ_LINGER`, …).
    let code: Int32
    /// The option's name as used in this API, e.g. `"linger"`.
    package let name: String
    let codec: ZMQOptionCodec<Value>

    init(_ code: Int32, _ name: String, _ codec: ZMQOptionCodec<Value>) {
        self.code = code
        self.name = name
        self.codec = codec
    }

    /// The option's name.
    package var description: String { name }
}

/// A typed key for an option libzmq lets you read but not set (``lastEndpoint``, ``type``).
package struct ZMQReadOnlySocketOption<Value>: Sendable, CustomStringConvertible {
    let code: Int32
    /// The option's name as used in this API.
    package let name: String
    let codec: ZMQOptionCodec<Value>

    init(_ code: Int32, _ name: String, _ codec: ZMQOptionCodec<Value>) {
        self.code = code
        self.name = name
        self.codec = codec
    }

    /// The option's name.
    package var description: String { name }
}

/// A typed key for an option libzmq 4.3 lets you set but not read back
/// (subscriptions and the ROUTER behaviour flags).
package struct ZMQWriteOnlySocketOption<Value>: Sendable, CustomStringConvertible {
    let code: Int32
    /// The option's name as used in this API.
    package let name: String
    let codec: ZMQOptionCodec<Value>

    init(_ code: Int32, _ name: String, _ codec: ZMQOptionCodec<Value>) {
        self.code = code
        self.name = name
        self.codec = codec
    }

    /// The option's name.
    package var description: String { name }
}
