extension MessagePackValue {
    /// The value under the string key `key` of a map (the first, if a map repeats it); `nil` for a
    /// missing key or a value that is not a map. For schema migrations and tools that walk stored
    /// values: `old["count"]`, `old["added"]?["_0"]`.
    public subscript(key: String) -> MessagePackValue? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key == .string(key) }?.value
    }

    /// The element at `index` of an array; `nil` outside it or for a value that is not an array.
    public subscript(index: Int) -> MessagePackValue? {
        guard case .array(let items) = self, items.indices.contains(index) else { return nil }
        return items[index]
    }
}
