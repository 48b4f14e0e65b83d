/// Lets the decoder read arrays itself, element by element from the
/// `msgpack_object` array, without an unkeyed container per array and an
/// existential call per element.
protocol DecodableArray {
    static func decodeMessagePackArray(from object: ObjectRef, context: DecodingContext, node: CodingPathNode?) throws -> Self
}

extension Array: DecodableArray where Element: Decodable {
    static func decodeMessagePackArray(
        from object: ObjectRef, context: DecodingContext, node: CodingPathNode?
    ) throws -> Self {
        guard object.isArray else {
            throw DecodingError.typeMismatch(Self.self, .init(
                codingPath: CodingPathNode.path(node), debugDescription: "Expected an array, found \(object.kindDescription)."))
        }
        return try context.decodeElements(Element.self, of: object, node: node)
    }
}
