import CMsgPack

/// The same snapshot packed and unpacked by calling msgpack-c directly:
/// the baseline the Codable path is measured against.
final class HandWrittenCodec {
    private var buffer = msgpack_sbuffer()
    private var packer = msgpack_packer()

    init() {
        msgpack_sbuffer_init(&buffer)
        withUnsafeMutablePointer(to: &buffer) { msgpack_packer_init(&packer, $0, msgpack_sbuffer_write) }
    }

    deinit { msgpack_sbuffer_destroy(&buffer) }

    private func packKey(_ key: StaticString) {
        msgpack_pack_str_with_body(&packer, key.utf8Start, key.utf8CodeUnitCount)
    }

    func encode(_ snapshot: BenchSnapshot) -> [UInt8] {
        msgpack_sbuffer_clear(&buffer)
        msgpack_pack_map(&packer, 3)
        packKey("version"); msgpack_pack_int64(&packer, Int64(snapshot.version))
        packKey("counter"); msgpack_pack_int64(&packer, Int64(snapshot.counter))
        packKey("items")
        msgpack_pack_array(&packer, snapshot.items.count)
        for item in snapshot.items {
            msgpack_pack_map(&packer, 3)
            packKey("id"); msgpack_pack_int64(&packer, Int64(item.id))
            packKey("name")
            var name = item.name
            name.withUTF8 { _ = msgpack_pack_str_with_body(&packer, $0.baseAddress, $0.count) }
            packKey("done")
            if item.done { msgpack_pack_true(&packer) } else { msgpack_pack_false(&packer) }
        }
        return [UInt8](UnsafeRawBufferPointer(start: buffer.data, count: buffer.size))
    }

    enum Failure: Error { case malformed }

    private static func isKey(_ object: msgpack_object, _ key: StaticString) -> Bool {
        object.type == MSGPACK_OBJECT_STR && Int(object.via.str.size) == key.utf8CodeUnitCount
            && memcmp(object.via.str.ptr, key.utf8Start, key.utf8CodeUnitCount) == 0
    }

    /// Unpacks `bytes` with msgpack-c and hands the root map to `body` (the zone lives until it returns).
    private static func withRootMap<T>(_ bytes: [UInt8], _ body: (msgpack_object_map) throws -> T) throws -> T {
        var unpacked = msgpack_unpacked()
        msgpack_unpacked_init(&unpacked)
        defer { msgpack_unpacked_destroy(&unpacked) }
        var offset = 0
        let status = bytes.withUnsafeBytes {
            msgpack_unpack_next(&unpacked, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count, &offset)
        }
        guard status == MSGPACK_UNPACK_SUCCESS, unpacked.data.type == MSGPACK_OBJECT_MAP else { throw Failure.malformed }
        return try body(unpacked.data.via.map)
    }

    private static func int(_ object: msgpack_object) throws -> Int {
        switch object.type {
        case MSGPACK_OBJECT_POSITIVE_INTEGER: return Int(object.via.u64)
        case MSGPACK_OBJECT_NEGATIVE_INTEGER: return Int(object.via.i64)
        default: throw Failure.malformed
        }
    }

    func decode(_ bytes: [UInt8]) throws -> BenchSnapshot {
        try Self.withRootMap(bytes) { root in try decode(root) }
    }

    private func decode(_ root: msgpack_object_map) throws -> BenchSnapshot {
        var snapshot = BenchSnapshot(version: 0, counter: 0, items: [])
        for index in 0 ..< Int(root.size) {
            let entry = root.ptr[index]
            if Self.isKey(entry.key, "version") { snapshot.version = try Self.int(entry.val) }
            else if Self.isKey(entry.key, "counter") { snapshot.counter = try Self.int(entry.val) }
            else if Self.isKey(entry.key, "items") {
                guard entry.val.type == MSGPACK_OBJECT_ARRAY else { throw Failure.malformed }
                let array = entry.val.via.array
                snapshot.items.reserveCapacity(Int(array.size))
                for element in UnsafeBufferPointer(start: array.ptr, count: Int(array.size)) {
                    guard element.type == MSGPACK_OBJECT_MAP else { throw Failure.malformed }
                    var item = BenchItem(id: 0, name: "", done: false)
                    let fields = element.via.map
                    for field in UnsafeBufferPointer(start: fields.ptr, count: Int(fields.size)) {
                        if Self.isKey(field.key, "id") { item.id = try Self.int(field.val) }
                        else if Self.isKey(field.key, "name") {
                            guard field.val.type == MSGPACK_OBJECT_STR else { throw Failure.malformed }
                            // The stdlib's fast UTF-8 path (invalid bytes are repaired, not rejected).
                            item.name = String(decoding: UnsafeRawBufferPointer(
                                start: field.val.via.str.ptr, count: Int(field.val.via.str.size)), as: UTF8.self)
                        } else if Self.isKey(field.key, "done") {
                            guard field.val.type == MSGPACK_OBJECT_BOOLEAN else { throw Failure.malformed }
                            item.done = field.val.via.boolean
                        }
                    }
                    snapshot.items.append(item)
                }
            }
        }
        return snapshot
    }

    /// An action packed as Swift's synthesised encoding writes it: a one-entry map from the case
    /// name to a map of its associated values (`_0`), empty for a case without any.
    func encodeAction(_ action: BenchAction) -> [UInt8] {
        msgpack_sbuffer_clear(&buffer)
        msgpack_pack_map(&packer, 1)
        switch action {
        case .countUp: packKey("countUp"); msgpack_pack_map(&packer, 0)
        case .countUpAsync: packKey("countUpAsync"); msgpack_pack_map(&packer, 0)
        case .add(let amount):
            packKey("add")
            msgpack_pack_map(&packer, 1)
            packKey("_0"); msgpack_pack_int64(&packer, Int64(amount))
        }
        return [UInt8](UnsafeRawBufferPointer(start: buffer.data, count: buffer.size))
    }

    /// The action read straight from msgpack-c's unpacked objects.
    func decodeAction(_ bytes: [UInt8]) throws -> BenchAction {
        try Self.withRootMap(bytes) { root in
            guard root.size == 1, root.ptr[0].val.type == MSGPACK_OBJECT_MAP else { throw Failure.malformed }
            let entry = root.ptr[0]
            let fields = entry.val.via.map
            if Self.isKey(entry.key, "countUp") { return .countUp }
            if Self.isKey(entry.key, "countUpAsync") { return .countUpAsync }
            guard Self.isKey(entry.key, "add"), fields.size == 1, Self.isKey(fields.ptr[0].key, "_0") else { throw Failure.malformed }
            return .add(try Self.int(fields.ptr[0].val))
        }
    }

    /// The catalog packed with msgpack-c calls, keys sorted as the Codable encoder sorts them.
    func encodeCatalog(_ catalog: BenchCatalog) -> [UInt8] {
        msgpack_sbuffer_clear(&buffer)
        msgpack_pack_map(&packer, 2)
        packKey("fills"); msgpack_pack_int64(&packer, Int64(catalog.fills))
        packKey("entries")
        msgpack_pack_map(&packer, catalog.entries.count)
        for (key, value) in catalog.entries.sorted(by: { $0.key < $1.key }) {
            msgpack_pack_int64(&packer, Int64(key))
            var text = value
            text.withUTF8 { _ = msgpack_pack_str_with_body(&packer, $0.baseAddress, $0.count) }
        }
        return [UInt8](UnsafeRawBufferPointer(start: buffer.data, count: buffer.size))
    }

    /// The catalog built straight from msgpack-c's unpacked objects, with no Codable: the floor
    /// of decoding it into Swift values (one unpack, one String per entry, a reserved dictionary).
    func decodeCatalog(_ bytes: [UInt8]) throws -> BenchCatalog {
        try Self.withRootMap(bytes) { root in try decodeCatalog(root) }
    }

    private func decodeCatalog(_ root: msgpack_object_map) throws -> BenchCatalog {
        var catalog = BenchCatalog(fills: 0, entries: [:])
        for field in UnsafeBufferPointer(start: root.ptr, count: Int(root.size)) {
            if Self.isKey(field.key, "fills") { catalog.fills = try Self.int(field.val) }
            else if Self.isKey(field.key, "entries") {
                guard field.val.type == MSGPACK_OBJECT_MAP else { throw Failure.malformed }
                let map = field.val.via.map
                var entries: [Int: String] = [:]
                entries.reserveCapacity(Int(map.size))
                for entry in UnsafeBufferPointer(start: map.ptr, count: Int(map.size)) {
                    guard entry.val.type == MSGPACK_OBJECT_STR else { throw Failure.malformed }
                    entries[try Self.int(entry.key)] = String(decoding: UnsafeRawBufferPointer(
                        start: entry.val.via.str.ptr, count: Int(entry.val.via.str.size)), as: UTF8.self)
                }
                catalog.entries = entries
            }
        }
        return catalog
    }
}
