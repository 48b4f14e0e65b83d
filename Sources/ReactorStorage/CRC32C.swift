/// CRC-32C (Castagnoli, reflected polynomial `0x82F63B78`), the checksum that guards every
/// journal record and snapshot.
///
/// Castagnoli detects more error patterns than the zlib CRC-32 at the record sizes we write,
/// and it is the checksum used by ext4, iSCSI and most log-structured stores, so files can be
/// checked with standard tools. This implementation is table-driven (slicing-by-8) pure Swift,
/// so it needs no C dependency and no special CPU instructions.
///
/// The value is a plain struct: copy it to checksum several pieces incrementally.
/// It is `Sendable` and has no shared state besides the immutable lookup table.
///
///     CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283
package struct CRC32C: Sendable, Hashable {
    /// The checksum of everything passed to ``update(_:)-(UnsafeRawBufferPointer)`` so far
    /// (0 for no bytes).
    package private(set) var value: UInt32 = 0

    /// Starts an empty checksum (`value == 0`).
    package init() {}

    /// Extends the checksum with `bytes`, as if they followed everything seen before.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        value = Self.extend(value, bytes)
    }

    /// Extends the checksum with `bytes`, as if they followed everything seen before.
    package mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The checksum of `bytes` in one call.
    package static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        extend(0, bytes)
    }

    /// The checksum of `bytes` in one call.
    package static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { extend(0, $0) }
    }

    /// Eight 256-entry tables, flattened: entry `k * 256 + i` is the CRC of byte `i`
    /// followed by `k` zero bytes.
    private static let table: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var crc = UInt32(i)
            for _ in 0..<8 {
                crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1
            }
            table[i] = crc
        }
        for k in 1..<8 {
            for i in 0..<256 {
                let previous = table[(k - 1) * 256 + i]
                table[k * 256 + i] = (previous >> 8) ^ table[Int(previous & 0xFF)]
            }
        }
        return table
    }()

    private static func extend(_ start: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return start }
        return table.withUnsafeBufferPointer { t in
            var crc = ~start
            var offset = 0
            let count = bytes.count
            while count - offset >= 8 {
                let lo = crc ^ UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
                let hi = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
                crc = t[7 * 256 + Int(lo & 0xFF)]
                    ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((lo >> 16) & 0xFF)]
                    ^ t[4 * 256 + Int(lo >> 24)]
                    ^ t[3 * 256 + Int(hi & 0xFF)]
                    ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((hi >> 16) & 0xFF)]
                    ^ t[Int(hi >> 24)]
                offset += 8
            }
            while offset < count {
                let byte = base.load(fromByteOffset: offset, as: UInt8.self)
                crc = t[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
                offset += 1
            }
            return ~crc
        }
    }
}
