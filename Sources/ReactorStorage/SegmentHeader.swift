/// The header at the start of every journal segment:
///
/// | offset | size | field                                   |
/// |--------|------|-----------------------------------------|
/// | 0      | 8    | magic `RBUSJRNL` (ASCII)                |
/// | 8      | 4    | format version, UInt32 LE (currently 1) |
/// | 12     | 2    | app name length `n`, UInt16 LE          |
/// | 14     | n    | app name, UTF-8                         |
///
/// Records follow immediately at offset `14 + n`.
enum SegmentHeader {
    static let magic: [UInt8] = Array("RBUSJRNL".utf8)
    static let version: UInt32 = 1
    static let fixedSize = 14
    static let maxAppBytes = 255

    /// What the start of a segment file turned out to be.
    enum Check: Equatable {
        /// A full, matching header of this many bytes.
        case valid(length: Int)
        /// Fewer bytes than a header, all agreeing with the expected one: a segment whose
        /// creation was cut short.
        case torn(available: Int)
    }

    static func encode(app: String) -> [UInt8] {
        let name = Array(app.utf8)
        var bytes = magic
        withUnsafeBytes(of: version.littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt16(name.count).littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: name)
        return bytes
    }

    /// Checks the first bytes of `file` against this app's header.
    ///
    /// - Throws: ``PersistenceError/notAJournalSegment(file:)``,
    ///   ``PersistenceError/unsupportedFormat(version:file:)`` or
    ///   ``PersistenceError/appMismatch(expected:found:file:)``; never repairs those.
    static func check(_ bytes: UnsafeRawBufferPointer, app: String, file: String) throws -> Check {
        let n = bytes.count
        let magicBytes = min(n, magic.count)
        guard bytes.prefix(magicBytes).elementsEqual(magic.prefix(magicBytes)) else {
            throw PersistenceError.notAJournalSegment(file: file)
        }
        guard n >= 12 else { return .torn(available: n) }
        let found = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
        guard found == version else {
            throw PersistenceError.unsupportedFormat(version: found, file: file)
        }
        guard n >= fixedSize else { return .torn(available: n) }
        let nameLength = Int(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: 12, as: UInt16.self)))
        let available = min(n, fixedSize + nameLength)
        let name = String(decoding: bytes[fixedSize..<available], as: UTF8.self)
        let expected = Array(app.utf8)
        if available < fixedSize + nameLength {
            // Cut short: torn if what is there agrees with our own name.
            guard nameLength == expected.count,
                  bytes[fixedSize..<available].elementsEqual(expected.prefix(available - fixedSize))
            else { throw PersistenceError.appMismatch(expected: app, found: name, file: file) }
            return .torn(available: n)
        }
        guard bytes[fixedSize..<available].elementsEqual(expected) else {
            throw PersistenceError.appMismatch(expected: app, found: name, file: file)
        }
        return .valid(length: available)
    }
}
