/// The framing of a snapshot file:
///
/// | offset  | size | field                                                         |
/// |---------|------|---------------------------------------------------------------|
/// | 0       | 8    | magic `RBUSSNAP` (ASCII)                                      |
/// | 8       | 4    | format version, UInt32 LE (currently 1)                       |
/// | 12      | 2    | app name length `n`, UInt16 LE                                |
/// | 14      | n    | app name, UTF-8                                               |
/// | 14+n    | 8    | LSN the snapshot covers through, UInt64 LE                    |
/// | 22+n    | 8    | payload length `p`, UInt64 LE                                 |
/// | 30+n    | 4    | CRC32C, UInt32 LE, over bytes 0..<30+n followed by the payload |
/// | 34+n    | p    | payload                                                       |
enum SnapshotHeader {
    static let magic: [UInt8] = Array("RBUSSNAP".utf8)
    static let version: UInt32 = 1

    /// A snapshot file's payload, or why it is unusable.
    enum Decoded {
        case payload([UInt8])
        case defect(SnapshotRejection.Defect)
    }

    /// The header for `payload`, written just before it (its checksum covers both); the payload
    /// is not copied behind it, so that a large state's bytes go to the file from where they were
    /// encoded.
    static func header(app: String, lsn: UInt64, payload: UnsafeRawBufferPointer) -> [UInt8] {
        let name = Array(app.utf8)
        var bytes = magic
        bytes.reserveCapacity(34 + name.count)
        withUnsafeBytes(of: version.littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt16(name.count).littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: name)
        withUnsafeBytes(of: lsn.littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt64(payload.count).littleEndian) { bytes.append(contentsOf: $0) }
        var crc = CRC32C()
        crc.update(bytes)
        crc.update(payload)
        withUnsafeBytes(of: crc.value.littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// The payload of a snapshot file named for `expectedLSN`, or why it is unusable.
    ///
    /// - Throws: ``PersistenceError/unsupportedFormat(version:file:)`` and
    ///   ``PersistenceError/appMismatch(expected:found:file:)``: those are not damage to skip
    ///   but a directory this build must not use.
    static func decode(
        _ bytes: [UInt8], app: String, expectedLSN: UInt64, file: String
    ) throws -> Decoded {
        try bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws -> Decoded in
            let size = raw.count
            guard size >= 14 else { return .defect(.truncated(size: size, needed: 14)) }
            guard raw.prefix(8).elementsEqual(magic) else { return .defect(.badMagic) }
            let found = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
            guard found == version else { throw PersistenceError.unsupportedFormat(version: found, file: file) }
            let nameLength = Int(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: 12, as: UInt16.self)))
            let headerLength = 34 + nameLength
            guard size >= headerLength else { return .defect(.truncated(size: size, needed: headerLength)) }
            let name = raw[14..<(14 + nameLength)]
            guard name.elementsEqual(app.utf8) else {
                throw PersistenceError.appMismatch(
                    expected: app, found: String(decoding: name, as: UTF8.self), file: file)
            }
            let lsn = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 14 + nameLength, as: UInt64.self))
            let length = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 22 + nameLength, as: UInt64.self))
            let stored = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 30 + nameLength, as: UInt32.self))
            guard lsn == expectedLSN else { return .defect(.lsnMismatch(fileName: expectedLSN, header: lsn)) }
            guard length == UInt64(size - headerLength) else {
                return .defect(.lengthMismatch(declared: length, actual: size - headerLength))
            }
            var crc = CRC32C()
            crc.update(UnsafeRawBufferPointer(rebasing: raw[0..<(30 + nameLength)]))
            crc.update(UnsafeRawBufferPointer(rebasing: raw[headerLength...]))
            guard crc.value == stored else {
                return .defect(.checksumMismatch(stored: stored, computed: crc.value))
            }
            return .payload(Array(raw[headerLength...]))
        }
    }
}
