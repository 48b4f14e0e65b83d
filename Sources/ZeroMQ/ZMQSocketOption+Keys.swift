import CZMQ

extension ZMQSocketOption where Value == Int {
    /// Milliseconds unsent messages are kept after close (`ZMQ_LINGER`); -1 waits forever, 0 drops them.
    package static var linger: Self { Self(ZMQ_LINGER, "linger", .int32) }
    /// Outgoing queue limit in messages per peer (`ZMQ_SNDHWM`); 0 means no limit.
    package static var sendHighWaterMark: Self { Self(ZMQ_SNDHWM, "sendHighWaterMark", .int32) }
    /// Incoming queue limit in messages per peer (`ZMQ_RCVHWM`); 0 means no limit.
    package static var receiveHighWaterMark: Self { Self(ZMQ_RCVHWM, "receiveHighWaterMark", .int32) }
    /// Milliseconds between ZMTP heartbeat PINGs (`ZMQ_HEARTBEAT_IVL`); 0 disables heartbeats.
    package static var heartbeatInterval: Self { Self(ZMQ_HEARTBEAT_IVL, "heartbeatInterval", .int32) }
    /// Milliseconds to wait for traffic after a PING before dropping the peer (`ZMQ_HEARTBEAT_TIMEOUT`).
    package static var heartbeatTimeout: Self { Self(ZMQ_HEARTBEAT_TIMEOUT, "heartbeatTimeout", .int32) }
    /// Milliseconds the remote peer should wait for traffic from us (`ZMQ_HEARTBEAT_TTL`, stored in 100 ms steps).
    package static var heartbeatTTL: Self { Self(ZMQ_HEARTBEAT_TTL, "heartbeatTTL", .int32) }
    /// Milliseconds a blocking receive waits before failing with `EAGAIN` (`ZMQ_RCVTIMEO`); -1 waits forever.
    package static var receiveTimeout: Self { Self(ZMQ_RCVTIMEO, "receiveTimeout", .int32) }
    /// Milliseconds a blocking send waits before failing with `EAGAIN` (`ZMQ_SNDTIMEO`); -1 waits forever.
    package static var sendTimeout: Self { Self(ZMQ_SNDTIMEO, "sendTimeout", .int32) }
    /// TCP keep-alive (`ZMQ_TCP_KEEPALIVE`): -1 system default, 0 off, 1 on.
    package static var tcpKeepalive: Self { Self(ZMQ_TCP_KEEPALIVE, "tcpKeepalive", .int32) }
}

extension ZMQSocketOption where Value == Int64 {
    /// Largest inbound message in bytes (`ZMQ_MAXMSGSIZE`); a peer sending more is disconnected. -1 is unlimited.
    package static var maxMessageSize: Self { Self(ZMQ_MAXMSGSIZE, "maxMessageSize", .int64) }
}

extension ZMQSocketOption where Value == Bool {
    /// Keep only the last message in each queue (`ZMQ_CONFLATE`); single-part messages only.
    package static var conflate: Self { Self(ZMQ_CONFLATE, "conflate", .bool) }
    /// Queue messages only to completed connections (`ZMQ_IMMEDIATE`).
    package static var immediate: Self { Self(ZMQ_IMMEDIATE, "immediate", .bool) }
    /// Act as the CURVE server; requires `curveSecretKey` to be set too (`ZMQ_CURVE_SERVER`).
    package static var curveServer: Self { Self(ZMQ_CURVE_SERVER, "curveServer", .bool) }
}

extension ZMQSocketOption where Value == [UInt8] {
    /// This socket's routing id as seen by a ROUTER peer, 1–255 bytes (`ZMQ_ROUTING_ID`).
    package static var routingID: Self { Self(ZMQ_ROUTING_ID, "routingID", .bytes(capacity: 255)) }
    /// Our long-term CURVE public key as 32 raw bytes (`ZMQ_CURVE_PUBLICKEY`).
    package static var curvePublicKey: Self { Self(ZMQ_CURVE_PUBLICKEY, "curvePublicKey", .bytes(capacity: 32)) }
    /// Our long-term CURVE secret key as 32 raw bytes (`ZMQ_CURVE_SECRETKEY`).
    package static var curveSecretKey: Self { Self(ZMQ_CURVE_SECRETKEY, "curveSecretKey", .bytes(capacity: 32)) }
    /// A CURVE client's view of the server's public key as 32 raw bytes (`ZMQ_CURVE_SERVERKEY`).
    package static var curveServerKey: Self { Self(ZMQ_CURVE_SERVERKEY, "curveServerKey", .bytes(capacity: 32)) }
}

extension ZMQSocketOption where Value == String {
    /// Our CURVE public key as 40 Z85 characters (`ZMQ_CURVE_PUBLICKEY`).
    package static var curvePublicKey: Self { Self(ZMQ_CURVE_PUBLICKEY, "curvePublicKey", .string(capacity: 41)) }
    /// Our CURVE secret key as 40 Z85 characters (`ZMQ_CURVE_SECRETKEY`).
    package static var curveSecretKey: Self { Self(ZMQ_CURVE_SECRETKEY, "curveSecretKey", .string(capacity: 41)) }
    /// The server's CURVE public key as 40 Z85 characters, set on clients (`ZMQ_CURVE_SERVERKEY`).
    package static var curveServerKey: Self { Self(ZMQ_CURVE_SERVERKEY, "curveServerKey", .string(capacity: 41)) }
    /// ZAP authentication domain (`ZMQ_ZAP_DOMAIN`).
    package static var zapDomain: Self { Self(ZMQ_ZAP_DOMAIN, "zapDomain", .string(capacity: 256)) }
}

extension ZMQWriteOnlySocketOption where Value == [UInt8] {
    /// SUB: receive messages whose first frame starts with these bytes; empty subscribes to all (`ZMQ_SUBSCRIBE`).
    package static var subscribe: Self { Self(ZMQ_SUBSCRIBE, "subscribe", .bytes(capacity: 0)) }
    /// SUB: remove one earlier identical subscription (`ZMQ_UNSUBSCRIBE`).
    package static var unsubscribe: Self { Self(ZMQ_UNSUBSCRIBE, "unsubscribe", .bytes(capacity: 0)) }
}

extension ZMQWriteOnlySocketOption where Value == String {
    /// SUB: subscribe to a UTF-8 topic prefix (`ZMQ_SUBSCRIBE`).
    package static var subscribe: Self { Self(ZMQ_SUBSCRIBE, "subscribe", .string(capacity: 0)) }
    /// SUB: remove one earlier identical UTF-8 subscription (`ZMQ_UNSUBSCRIBE`).
    package static var unsubscribe: Self { Self(ZMQ_UNSUBSCRIBE, "unsubscribe", .string(capacity: 0)) }
}

extension ZMQWriteOnlySocketOption where Value == Bool {
    /// ROUTER: fail with `EHOSTUNREACH` instead of dropping unroutable messages (`ZMQ_ROUTER_MANDATORY`).
    package static var routerMandatory: Self { Self(ZMQ_ROUTER_MANDATORY, "routerMandatory", .bool) }
    /// ROUTER: a new peer with a known routing id takes over the old connection (`ZMQ_ROUTER_HANDOVER`).
    package static var routerHandover: Self { Self(ZMQ_ROUTER_HANDOVER, "routerHandover", .bool) }
    /// ROUTER/DEALER: send an empty message on connect so the peer learns our routing id (`ZMQ_PROBE_ROUTER`).
    package static var probeRouter: Self { Self(ZMQ_PROBE_ROUTER, "probeRouter", .bool) }
}

extension ZMQReadOnlySocketOption where Value == String {
    /// The last endpoint bound or connected, with wildcard ports resolved (`ZMQ_LAST_ENDPOINT`).
    package static var lastEndpoint: Self { Self(ZMQ_LAST_ENDPOINT, "lastEndpoint", .string(capacity: 1024)) }
}

extension ZMQReadOnlySocketOption where Value == ZMQSocketType {
    /// The socket's type as libzmq reports it (`ZMQ_TYPE`).
    package static var type: Self { Self(ZMQ_TYPE, "type", .socketType) }
}
