import MessagePack
import ReactorWire

/// The body of a `records` message: the records' payloads, each byte for byte as journaled, as
/// one MessagePack array of `bin` values in a single frame, packed and read by msgpack-c.
///
/// One frame for the message rather than one per record: a journal record is tens of bytes, and
/// each ZeroMQ frame costs a message allocation and a pass through the I/O threads of both
/// authorities, which made streaming a record cost the primary and its standby more than
/// journaling it.
enum ReplicationRecords {
    /// Packs `payloads` into `writer`, after what it holds (clear it first for a frame of its own).
    static func pack(_ payloads: [[UInt8]], into writer: MessagePackWriter) {
        writer.packArrayHeader(payloads.count)
        for payload in payloads { writer.packBinary(payload) }
    }

    /// The payloads a body holds, in order; `nil` for a frame that is not exactly an array of
    /// `bin` values (the standby drops such a message and asks again).
    static func unpack(_ frame: [UInt8]) -> [[UInt8]]? {
        try? WireBody.elements(of: frame, what: "records", shape: "a record's payload (bin)") { $0.binary }
    }
}
