import CMsgPack
import ZeroMQ

/// Reads the protocol's messages with libzmq and msgpack-c alone (`msgpack_unpack_next` into
/// msgpack-c's objects, one zone reused for every frame), for the limit baselines' authority and
/// worker (``PipelineBaselineAuthority``, ``PipelineBaselineWorker``): both receive the same
/// `[header, payload?]` messages and parse the same headers and unit-case payloads, so they
/// share this one reader instead of two copies.
///
/// What it returns is copied out of the zone (unsigned integers and strings), so it stays valid
/// after the next frame is read.
final class BaselineMessageReader {
    /// A header `[1, kind, element...]` as read: the kind and what follows it.
    struct Header {
        /// One element after the kind: the protocol's headers only hold unsigned integers,
        /// strings and arrays of strings where the baselines look (nil and the rest are `other`).
        enum Element: Equatable {
            case uint(UInt64)
            case text(String)
            case texts([String])
            case other
        }

        var kind: String
        var elements: [Element]

        /// Element `index` if it is an unsigned integer.
        func uint(_ index: Int) -> UInt64? {
            guard index < elements.count, case .uint(let value) = elements[index] else { return nil }
            return value
        }

        /// Element `index` if it is a string.
        func text(_ index: Int) -> String? {
            guard index < elements.count, case .text(let value) = elements[index] else { return nil }
            return value
        }

        /// Element `index` if it is an array of strings.
        func texts(_ index: Int) -> [String]? {
            guard index < elements.count, case .texts(let value) = elements[index] else { return nil }
            return value
        }

        /// The protocol's `ref` of an error: the first unsigned integer after the kind, else 0.
        var ref: UInt64 {
            for case .uint(let value) in elements { return value }
            return 0
        }
    }

    /// The protocol version every header starts with.
    static let version: UInt64 = 1

    private var unpacked = msgpack_unpacked()
    /// Reads the effects inside a `jobs` body while the body's objects stay in ``unpacked``.
    private lazy var effectReader = BaselineMessageReader()

    init() { msgpack_unpacked_init(&unpacked) }

    deinit { msgpack_unpacked_destroy(&unpacked) }

    /// Reads up to `limit` messages `[identity, header, payload?]` (`routed`: from a ROUTER) or
    /// `[header, payload?]` from `socket`, waiting for the first (up to the socket's receive
    /// timeout) when `wait`, and hands each to `handle` with its identity (empty when not
    /// routed), its header (`nil`: not a header) and its payload, valid only during the call.
    /// Returns how many messages had too few or too many frames; those are dropped.
    @discardableResult
    func drain(_ socket: ZMQSocket, routed: Bool, wait: Bool, limit: Int,
               _ handle: (_ identity: [UInt8], _ header: Header?, _ payload: UnsafeRawBufferPointer?) throws -> Void) throws -> Int {
        let headerIndex = routed ? 1 : 0
        var read = 0
        var dropped = 0
        while read < limit {
            var identity: [UInt8] = []
            var header: Header?
            var frames = 0
            let got = try socket.receiveFrames(wait: wait && read == 0) { frame, index, more in
                frames = index + 1
                switch index - headerIndex {
                case -1: identity = Array(frame)
                case 0: header = self.header(frame)
                case 1 where !more: try handle(identity, header, frame)
                default: break
                }
            }
            guard got else { break }
            read += 1
            if frames == headerIndex + 1 { try handle(identity, header, nil) }
            else if frames <= headerIndex || frames > headerIndex + 2 { dropped += 1 }
        }
        return dropped
    }

    /// The header in `frame`; `nil` when it is not one MessagePack array of version 1 with a
    /// string kind.
    func header(_ frame: UnsafeRawBufferPointer) -> Header? {
        guard let object = unpack(frame), object.type == MSGPACK_OBJECT_ARRAY, object.via.array.size >= 2,
              let items = object.via.array.ptr else { return nil }
        guard items[0].type == MSGPACK_OBJECT_POSITIVE_INTEGER, items[0].via.u64 == Self.version,
              let kind = Self.string(items[1]) else { return nil }
        var elements: [Header.Element] = []
        let count = Int(object.via.array.size)
        elements.reserveCapacity(count - 2)
        for index in 2..<count {
            if items[index].type == MSGPACK_OBJECT_POSITIVE_INTEGER { elements.append(.uint(items[index].via.u64)) }
            else if let text = Self.string(items[index]) { elements.append(.text(text)) }
            else if let texts = Self.strings(items[index]) { elements.append(.texts(texts)) }
            else { elements.append(.other) }
        }
        return Header(kind: kind, elements: elements)
    }

    /// The case name of a payload that is a Codable enum case without values, `{"name":{}}`
    /// (the counter's `countUp`, `slowIncrease`, `increase`); `nil` for anything else.
    func unitCase(_ frame: UnsafeRawBufferPointer) -> String? {
        guard let object = unpack(frame), object.type == MSGPACK_OBJECT_MAP, object.via.map.size == 1, let entry = object.via.map.ptr?.pointee,
              entry.val.type == MSGPACK_OBJECT_MAP, entry.val.via.map.size == 0 else { return nil }
        return Self.string(entry.key)
    }

    /// The one object in `frame`, unpacked by msgpack-c into the reused zone.
    private func unpack(_ frame: UnsafeRawBufferPointer) -> msgpack_object? {
        guard let base = frame.baseAddress?.assumingMemoryBound(to: CChar.self) else { return nil }
        var offset = 0
        guard msgpack_unpack_next(&unpacked, base, frame.count, &offset) == MSGPACK_UNPACK_SUCCESS, offset == frame.count else { return nil }
        return unpacked.data
    }

    /// The jobs of a `jobs` body `[[action_seq, effect_index, kind, effect], ...]`: numbers and
    /// kind copied out, each effect's unit case read (`nil` when it is not one); `nil` when the
    /// body has another shape.
    func jobs(_ frame: UnsafeRawBufferPointer) -> [(job: UInt64, effect: UInt64, kind: String, unitCase: String?)]? {
        guard let object = unpack(frame), object.type == MSGPACK_OBJECT_ARRAY, let items = object.via.array.ptr else { return nil }
        var jobs: [(job: UInt64, effect: UInt64, kind: String, unitCase: String?)] = []
        jobs.reserveCapacity(Int(object.via.array.size))
        for index in 0..<Int(object.via.array.size) {
            let item = items[index]
            guard item.type == MSGPACK_OBJECT_ARRAY, item.via.array.size == 4, let fields = item.via.array.ptr,
                  fields[0].type == MSGPACK_OBJECT_POSITIVE_INTEGER, fields[1].type == MSGPACK_OBJECT_POSITIVE_INTEGER,
                  let kind = Self.string(fields[2]), fields[3].type == MSGPACK_OBJECT_BIN else { return nil }
            // The effect's bytes lie in `frame`: read with an unpacker of their own, so that the
            // body's objects stay where they are.
            let effect = UnsafeRawBufferPointer(start: fields[3].via.bin.ptr, count: Int(fields[3].via.bin.size))
            jobs.append((fields[0].via.u64, fields[1].via.u64, kind, effectReader.unitCase(effect)))
        }
        return jobs
    }

    /// The `done` reports of a `reports` body `[[action_seq, effect_index, "done", n, mutation], ...]`
    /// (the baselines send no others): numbers copied out, each mutation's bytes copied (`nil`
    /// when the entry has none); `nil` for another shape or any other report.
    func doneReports(_ frame: UnsafeRawBufferPointer) -> [(job: UInt64, effect: UInt64, count: UInt64, mutation: [UInt8]?)]? {
        guard let object = unpack(frame), object.type == MSGPACK_OBJECT_ARRAY, let items = object.via.array.ptr else { return nil }
        var reports: [(job: UInt64, effect: UInt64, count: UInt64, mutation: [UInt8]?)] = []
        reports.reserveCapacity(Int(object.via.array.size))
        for index in 0..<Int(object.via.array.size) {
            let item = items[index]
            guard item.type == MSGPACK_OBJECT_ARRAY, item.via.array.size == 5, let fields = item.via.array.ptr,
                  fields[0].type == MSGPACK_OBJECT_POSITIVE_INTEGER, fields[1].type == MSGPACK_OBJECT_POSITIVE_INTEGER,
                  Self.string(fields[2]) == "done", fields[3].type == MSGPACK_OBJECT_POSITIVE_INTEGER else { return nil }
            var mutation: [UInt8]?
            if fields[4].type == MSGPACK_OBJECT_BIN {
                mutation = Array(UnsafeRawBufferPointer(start: fields[4].via.bin.ptr, count: Int(fields[4].via.bin.size)))
            } else if fields[4].type != MSGPACK_OBJECT_NIL {
                return nil
            }
            reports.append((fields[0].via.u64, fields[1].via.u64, fields[3].via.u64, mutation))
        }
        return reports
    }

    private static func strings(_ object: msgpack_object) -> [String]? {
        guard object.type == MSGPACK_OBJECT_ARRAY else { return nil }
        guard let items = object.via.array.ptr else { return object.via.array.size == 0 ? [] : nil }
        var strings: [String] = []
        for index in 0..<Int(object.via.array.size) {
            guard let string = string(items[index]) else { return nil }
            strings.append(string)
        }
        return strings
    }

    private static func string(_ object: msgpack_object) -> String? {
        guard object.type == MSGPACK_OBJECT_STR, let pointer = object.via.str.ptr else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: pointer, count: Int(object.via.str.size)), as: UTF8.self)
    }
}
