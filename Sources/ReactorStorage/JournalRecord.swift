/// One record read back from the journal: its log sequence number and the opaque payload the
/// authority appended.
package struct JournalRecord: Hashable, Sendable {
    /// Log sequence number: 1 for the first record ever appended, then strictly increasing by 1.
    package let lsn: UInt64
    /// The bytes given to ``Journal/append(_:)``, unchanged.
    package let payload: [UInt8]

    /// Makes a record (mostly for tests and tools).
    package init(lsn: UInt64, payload: [UInt8]) {
        self.lsn = lsn
        self.payload = payload
    }
}

/// The on-disk framing of a record:
///
/// | offset | size | field                                               |
/// |--------|------|-----------------------------------------------------|
/// | 0      | 4    | payload length `n`, UInt32 LE                       |
/// | 4      | 4    | CRC32C, UInt32 LE, over bytes 8..<16+n (LSN+payload) |
/// | 8      | 8    | LSN, UInt64 LE                                      |
/// | 16     | n    | payload                                             |
enum RecordFrame {
    static let headerSize = 16

    /// The outcome of decoding the frame at an offset.
    enum Decoded {
        case record(lsn: UInt64, payload: Range<Int>)
        case damaged(JournalDamage.Problem)
    }

    static func checksum(lsn: UInt64, payload: UnsafeRawBufferPointer) -> UInt32 {
        var crc = CRC32C()
        withUnsafeBytes(of: lsn.littleEndian) { crc.update($0) }
        crc.update(payload)
        return crc.value
    }

    /// Appends the frame for `payload` at `lsn` to `buffer`.
    static func append(lsn: UInt64, payload: UnsafeRawBufferPointer, to buffer: inout [UInt8]) {
        let crc = checksum(lsn: lsn, payload: payload)
        withUnsafeBytes(of: UInt32(payload.count).littleEndian) { buffer.append(contentsOf: $0) }
        withUnsafeBytes(of: crc.littleEndian) { buffer.append(contentsOf: $0) }
        withUnsafeBytes(of: lsn.littleEndian) { buffer.append(contentsOf: $0) }
        buffer.append(contentsOf: payload)
    }

    /// Decodes the frame at `offset`, which must be `< bytes.count`; checks length, checksum and
    /// that the LSN is `expectedLSN`.
    static func decode(_ bytes: UnsafeRawBufferPointer, at offset: Int, expectedLSN: UInt64) -> Decoded {
        let available = bytes.count - offset
        guard available >= headerSize else { return .damaged(.partialRecordHeader(available: available)) }
        let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
        let lsn = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
        guard available - headerSize >= length else {
            return .damaged(.shortPayload(declared: length, available: available - headerSize))
        }
        let payload = (offset + headerSize)..<(offset + headerSize + length)
        let computed = checksum(lsn: lsn, payload: UnsafeRawBufferPointer(rebasing: bytes[payload]))
        guard computed == stored else {
            return .damaged(.checksumMismatch(stored: stored, computed: computed))
        }
        guard lsn == expectedLSN else {
            return .damaged(.lsnOutOfSequence(expected: expectedLSN, found: lsn))
        }
        return .record(lsn: lsn, payload: payload)
    }
}
