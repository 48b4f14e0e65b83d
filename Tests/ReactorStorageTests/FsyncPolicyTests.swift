@testable import ReactorStorage
import Testing

extension PersistenceTests {
    @Suite struct FsyncPolicyTests {
        @Test func parsesTheThreeNames() throws {
            #expect(try FsyncPolicy(parsing: "always") == .always)
            #expect(try FsyncPolicy(parsing: "batch") == .batch)
            #expect(try FsyncPolicy(parsing: "none") == FsyncPolicy.none)
            #expect(try FsyncPolicy(parsing: " Batch ") == .batch)
            #expect(FsyncPolicy("ALWAYS") == .always)
            #expect(FsyncPolicy.default == .batch)
            #expect(FsyncPolicy.allCases.map(\.description) == ["always", "batch", "none"])
        }

        @Test func rejectsOtherText() {
            #expect(throws: PersistenceError.invalidFsyncPolicy("sometimes")) {
                try FsyncPolicy(parsing: "sometimes")
            }
            #expect(FsyncPolicy("") == nil)
        }

        @Test func noneNeverSyncs() throws {
            let dir = try TemporaryDirectory()
            let journal = try Journal(directory: dir.path, app: Disk.app, policy: .none, segmentBytes: 200)
            try Disk.fill(journal, 1...30, batch: 3)
            try journal.close()
            #expect(journal.metrics.fsyncs == 0)
            #expect(journal.metrics.fsyncTime == .zero)
            #expect(journal.metrics.commits == 10)
            #expect(journal.metrics.recordsAppended == 30)
            #expect(journal.metrics.bytesWritten == 30 * 36)
        }

        @Test(arguments: [FsyncPolicy.always, .batch])
        func syncingPoliciesSyncOncePerCommit(policy: FsyncPolicy) throws {
            let dir = try TemporaryDirectory()
            let journal = try Journal(directory: dir.path, app: Disk.app, policy: policy)
            #expect(journal.metrics.fsyncs == 0)
            try Disk.fill(journal, 1...12, batch: 4)
            #expect(journal.metrics.commits == 3)
            #expect(journal.metrics.fsyncs == 3)
            try journal.commit()  // nothing buffered: no write, no sync
            #expect(journal.metrics.fsyncs == 3)
            try journal.append(Disk.payload(13))
            try journal.commit()
            #expect(journal.metrics.fsyncs == 4)
            #expect(journal.metrics.fsyncTime > .zero)
            try journal.close()
        }
    }
}
