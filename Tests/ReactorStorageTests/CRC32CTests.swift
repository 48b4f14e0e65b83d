@testable import ReactorStorage
import Testing

extension PersistenceTests {
    @Suite struct CRC32CTests {
        @Test func checkValue() {
            #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        }

        @Test func emptyIsZero() {
            #expect(CRC32C.checksum([UInt8]()) == 0)
            #expect(CRC32C().value == 0)
        }

        /// RFC 3720, appendix B.4.
        @Test func iscsiVectors() {
            #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
            #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
            #expect(CRC32C.checksum((0..<32).map { UInt8($0) }) == 0x46DD_794E)
            #expect(CRC32C.checksum((0..<32).map { UInt8(31 - $0) }) == 0x113F_DB5C)
        }

        @Test func incrementalEqualsOneShot() {
            let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }
            let whole = CRC32C.checksum(bytes)
            for split in [0, 1, 7, 8, 9, 500, 999, 1000] {
                var crc = CRC32C()
                crc.update(Array(bytes[..<split]))
                crc.update(Array(bytes[split...]))
                #expect(crc.value == whole, "split at \(split)")
            }
        }
    }
}
