import MessagePack
@testable import ReactorWire
import Testing

/// A header `[1, kind, count]`, as the batched messages (`jobs`, `reports`, `acks`) have.
func countHeader(_ kind: String, _ count: Int) -> [UInt8] {
    HeaderWriter().header(kind, { $0.packUInt(UInt64(count)) }, count: 1)
}

/// A body of one element, packed by `fill`.
func bodyOfOne(_ fill: (MessagePackWriter) -> Void) -> [UInt8] {
    let writer = MessagePackWriter()
    writer.packArrayHeader(1)
    fill(writer)
    return writer.bytes
}

/// Requires `parse` to refuse each message of `cases` with a `malformed` error.
func expectMalformed<T>(_ cases: [[[UInt8]]], sourceLocation: SourceLocation = #_sourceLocation,
                        _ parse: ([[UInt8]]) throws(ProtocolError) -> T) {
    for frames in cases {
        do {
            _ = try parse(frames)
            Issue.record("accepted \(frames)", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == .malformed, "\(error)", sourceLocation: sourceLocation)
        }
    }
}
