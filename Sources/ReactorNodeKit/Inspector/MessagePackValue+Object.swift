import MessagePack

extension MessagePackValue {
    /// A JSON object from its fields, in this order (`jsonText()` sorts the keys).
    static func object(_ fields: [(String, MessagePackValue)]) -> MessagePackValue {
        .map(fields.map { (key: .string($0.0), value: $0.1) })
    }
}
