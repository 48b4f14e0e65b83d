import CMsgPack

/// Protects msgpack-c from hostile container headers before it unpacks.
///
/// Why: msgpack-c's C unpacker (`template_callback_array` / `_map` in
/// `unpack.c`) allocates `count × sizeof(msgpack_object)` from its zone the
/// moment it reads an array or map header, before any element is present.
/// A five-byte `array32` header claiming 4 294 967 295 elements would request
/// ~100 GB; a handful of nested `map32` headers could request gigabytes each.
/// The C API has no hook to cap zone growth, so the check has to happen first.
///
/// What: every element takes at least one byte, so the elements still owed
/// by all open containers can never exceed the bytes left in the input.
/// When that holds, msgpack-c's container allocations total at most
/// `24 bytes × input length` (plus 32 open `fix` containers), so a tiny
/// buffer can never make us allocate more than a small multiple of itself.
///
/// How (two stages, no format parsing where msgpack-c can do it):
/// 1. `isPlainlySafe` is a conservative byte scan over every byte that
///    *could* start an `array16/32` or `map16/32` header (`0xdc…0xdf`): each
///    candidate's count must fit in the bytes after it, and all candidates'
///    counts together must fit in the input. Real headers are among the
///    candidates, so passing proves the bound. Valid snapshots pass in one
///    linear pass; only suspicious input pays for stage 2.
/// 2. Otherwise `validate` walks the structure exactly. It reads only the
///    array/map header forms (the allocation-relevant ones) and lets
///    msgpack-c's own `msgpack_unpack` parse and measure every other
///    element (scalars, str, bin, ext: these never allocate by size, they
///    are referenced in place). It also reproduces msgpack-c's nesting limit
///    so that too-deep input gets a precise error.
enum InputGuard {
    /// Errors found in the raw input, with the byte offset where they occur.
    enum Failure: Error, Equatable {
        case empty
        case truncated(offset: Int)
        case invalidByte(offset: Int, byte: UInt8)
        case declaredSizeExceedsInput(offset: Int, declared: Int, available: Int)
        case tooDeep(offset: Int)
        case trailingBytes(offset: Int, count: Int)
        case outOfMemory

        var message: String {
            switch self {
            case .empty:
                return "Empty input: expected one MessagePack value."
            case .truncated(let offset):
                return "Truncated input: the value starting at byte \(offset) needs more bytes."
            case .invalidByte(let offset, let byte):
                return "Invalid MessagePack type byte 0x\(String(byte, radix: 16)) at byte \(offset)."
            case .declaredSizeExceedsInput(let offset, let declared, let available):
                return "Container at byte \(offset) declares \(declared) elements but only "
                    + "\(available) bytes remain for everything still expected."
            case .tooDeep(let offset):
                return "Nesting deeper than \(MessagePack.maximumNestingDepth) containers "
                    + "(msgpack-c's unpack stack limit) at byte \(offset)."
            case .trailingBytes(let offset, let count):
                return "\(count) trailing bytes after the value, starting at byte \(offset)."
            case .outOfMemory:
                return "msgpack-c could not allocate memory while unpacking."
            }
        }
    }

    /// Stage 1: a fast, conservative byte scan. `true` means no container
    /// header in the input can declare more elements than the input holds.
    static func isPlainlySafe(_ input: UnsafeRawBufferPointer) -> Bool {
        let count = input.count
        var claimed = 0
        var index = 0
        while index < count {
            // Skip 16, then 8 bytes at a time while none of them is 0xdc…0xdf (SWAR zero-byte
            // test on `(byte & 0xfc) ^ 0xdc`); two words per turn halve the loop's own cost.
            while index + 16 <= count {
                let first = Self.marksCandidates(input.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                let second = Self.marksCandidates(input.loadUnaligned(fromByteOffset: index + 8, as: UInt64.self))
                if first | second != 0 { break }
                index += 16
            }
            while index + 8 <= count {
                if Self.marksCandidates(input.loadUnaligned(fromByteOffset: index, as: UInt64.self)) != 0 { break }
                index += 8
            }
            guard index < count else { break }
            let byte = input[index]
            if byte & 0xfc == 0xdc {
                let wide = byte & 0x01 == 1
                let headerLength = wide ? 5 : 3
                if index + headerLength > count { return false }
                var declared = Int(input[index + 1]) << 8 | Int(input[index + 2])
                if wide {
                    declared = declared << 16 | Int(input[index + 3]) << 8 | Int(input[index + 4])
                }
                let elements = byte >= 0xde ? declared * 2 : declared
                claimed += elements
                if elements > count - index - headerLength || claimed > count { return false }
            }
            index += 1
        }
        return true
    }

    /// Non-zero when one of the eight bytes of `word` is 0xdc…0xdf (the high bit of each such
    /// byte set, and perhaps of bytes after it: it says where to look, not how many).
    @inline(__always)
    private static func marksCandidates(_ word: UInt64) -> UInt64 {
        let marked = (word & 0xfcfc_fcfc_fcfc_fcfc) ^ 0xdcdc_dcdc_dcdc_dcdc
        return (marked &- 0x0101_0101_0101_0101) & ~marked & 0x8080_8080_8080_8080
    }

    /// The element count and header length of an array/map header starting
    /// with `byte`, or `nil` if `byte` does not start one.
    private static func containerHeader(
        _ input: UnsafeRawBufferPointer, at offset: Int
    ) throws(Failure) -> (elements: Int, headerLength: Int)? {
        let byte = input[offset]
        switch byte {
        case 0x90...0x9f: return (Int(byte & 0x0f), 1)
        case 0x80...0x8f: return (Int(byte & 0x0f) * 2, 1)
        case 0xdc...0xdf:
            let wide = byte & 0x01 == 1
            let headerLength = wide ? 5 : 3
            guard offset + headerLength <= input.count else { throw .truncated(offset: offset) }
            var declared = 0
            for position in offset + 1 ..< offset + headerLength {
                declared = declared << 8 | Int(input[position])
            }
            return (byte >= 0xde ? declared * 2 : declared, headerLength)
        default:
            return nil
        }
    }

    /// Stage 2: exact structural validation of one value at the start of
    /// `input`. Returns the number of bytes the value occupies.
    ///
    /// msgpack-c measures every element that is not a container, unpacked into `zone` (the
    /// caller's, about to be cleared; or one made for this call): such elements take nothing
    /// from it, where `msgpack_unpack_next` made and freed a zone (an 8 KiB `malloc`) for each.
    @discardableResult
    static func validate(_ input: UnsafeRawBufferPointer, zone given: UnsafeMutablePointer<msgpack_zone>? = nil) throws(Failure) -> Int {
        guard let base = input.baseAddress, input.count > 0 else { throw .empty }
        let total = input.count
        var offset = 0
        // Elements still owed, per open container; entry 0 is the top-level value.
        var owed: [Int] = [1]
        owed.reserveCapacity(MessagePack.maximumNestingDepth + 1)
        var owedTotal = 1
        guard let zone = given ?? msgpack_zone_new(Int(MSGPACK_ZONE_CHUNK_SIZE)) else { throw .outOfMemory }
        defer { if given == nil { msgpack_zone_free(zone) } }
        var element = msgpack_object()

        while true {
            while let last = owed.last, last == 0 { owed.removeLast() }
            if owed.isEmpty { return offset }
            owed[owed.count - 1] -= 1
            owedTotal -= 1
            guard offset < total else { throw .truncated(offset: offset) }

            if let header = try containerHeader(input, at: offset) {
                if owed.count - 1 >= MessagePack.maximumNestingDepth { throw .tooDeep(offset: offset) }
                let available = total - offset - header.headerLength
                if owedTotal + header.elements > available {
                    throw .declaredSizeExceedsInput(
                        offset: offset, declared: header.elements, available: available - owedTotal)
                }
                offset += header.headerLength
                if header.elements > 0 {
                    owed.append(header.elements)
                    owedTotal += header.elements
                }
                continue
            }

            var end = offset
            let status = msgpack_unpack(base.assumingMemoryBound(to: CChar.self), total, &end, zone, &element)
            switch status {
            case MSGPACK_UNPACK_SUCCESS, MSGPACK_UNPACK_EXTRA_BYTES:
                offset = end
            case MSGPACK_UNPACK_CONTINUE:
                throw .truncated(offset: offset)
            case MSGPACK_UNPACK_NOMEM_ERROR:
                throw .outOfMemory
            default:
                throw .invalidByte(offset: offset, byte: input[offset])
            }
        }
    }
}
