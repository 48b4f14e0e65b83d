import Foundation
import Testing
import TestSupport

extension NodeKitAcceptanceTests {
    /// docs/GUIDE.md's Swift blocks, written as the package they make, against this checkout:
    /// it builds, and its tests (the guide's own TestStore, Store and shape tests) pass. In the
    /// suite of the other package builds, so that they take turns in the shared scratch directory.
    @Test(.timeLimit(.minutes(20)))
    func theGuidesPackageBuildsAndItsTestsPass() async throws {
        let guide = try GuideTests.guide()
        let package = DependentPackages.directory("library")
        try DependentPackages.write(try guide.files(dependingOn: ChildProcess.packageRoot), to: package)
        let build = try await Self.swift(["build", "--build-tests"], package, scratch: DependentPackages.scratch, timeout: .seconds(15 * 60))
        try #require(build.reap() == 0, "the guide's package does not build: \(build.output.suffix(40).joined(separator: "\n"))\(build.diagnostics)")
        let test = try await Self.swift(["test", "--skip-build"], package, scratch: DependentPackages.scratch, timeout: .seconds(5 * 60))
        let output = test.output.joined(separator: "\n")
        #expect(test.reap() == 0, "the guide's tests failed: \(output)\(test.diagnostics)")
        // LocalStoreTests 1, LibraryTests 3, ShapeChangeTests 1.
        #expect(output.contains("Test run with 5 tests in 1 suite passed"), "\(output)")
        #expect(FileManager.default.isExecutableFile(atPath: DependentPackages.scratch + "/debug/library-node"))
    }
}
