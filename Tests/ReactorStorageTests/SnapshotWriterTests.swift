@testable import ReactorStorage
import Testing

extension PersistenceTests {
    /// The snapshot writer's thread: the bytes a request's encoder lends reach the store as they
    /// are, and a request whose encoder lends none fails alone, without stopping the writer.
    @Suite struct SnapshotWriterTests {
        @Test func lentBytesAreWrittenAndAnEncoderThatLendsNoneFailsAlone() throws {
            let dir = try TemporaryDirectory()
            let (path, app) = (dir.path, Disk.app)
            let writer = SnapshotWriter(name: "snapshot-writer-test") { try SnapshotStore(directory: path, app: app) }
            defer { writer.stop() }
            let payload = Disk.payload(3, length: 100_000)

            #expect(writer.submit(.init(lsn: 10, version: 4) { write in try payload.withUnsafeBytes(write) }))
            let written = try #require(writer.waitForOutcome())
            #expect(written.lsn == 10 && written.version == 4 && written.bytes == 100_000)
            #expect(try written.result.get().file == dir.snapshots + "/snapshot-00000000000000000010.snap")

            #expect(writer.submit(.init(lsn: 20, version: 5) { _ in }))
            let failed = try #require(writer.waitForOutcome())
            #expect(failed.lsn == 20 && failed.bytes == 0)
            #expect(throws: PersistenceError.invalidConfiguration("the snapshot's encoder lent no bytes")) { try failed.result.get() }

            let store = try SnapshotStore(directory: path, app: app)
            #expect(try store.snapshotLSNs() == [10])
            #expect(try store.loadNewest()?.payload == payload)

            // The writer goes on: the next request is written.
            #expect(writer.submit(.init(lsn: 30, version: 6) { write in try [UInt8]([1, 2, 3]).withUnsafeBytes(write) }))
            #expect(try #require(writer.waitForOutcome()).result.get().retained == [10, 30])
            #expect(try store.loadNewest()?.payload == [1, 2, 3])
        }
    }
}
