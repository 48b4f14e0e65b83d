/// Lets the encoder write arrays itself: the header is known up front
/// (`count`), so elements go straight into the enclosing buffer instead of
/// through an unkeyed container, a node and a copy.
protocol EncodableArray {
    func encodeMessagePackArray(
        session: EncodingSession, writer: MessagePackWriter, parent: EncoderNode?, key: (any CodingKey)?
    ) throws
}

extension Array: EncodableArray where Element: Encodable {
    func encodeMessagePackArray(
        session: EncodingSession, writer: MessagePackWriter, parent: EncoderNode?, key: (any CodingKey)?
    ) throws {
        writer.packArrayHeader(count)
        guard !isEmpty else { return }
        // One node carries the coding path of the array for its elements.
        let node = session.makeNode(parent: parent, key: key, target: nil)
        try session.encodeElements(self, into: writer, node: node)
    }
}
