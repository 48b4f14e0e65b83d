import Foundation
import Testing
import TestSupport
import TestTraits

/// docs/GUIDE.md as a package: which files its Swift blocks make, and its commands. (Building
/// that package and running its tests is `NodeKitAcceptanceTests.theGuidesPackageBuildsAndItsTestsPass`.)
@Suite(.spawnsProcesses) struct GuideTests {
    static func guide() throws -> GuidePackage {
        try GuidePackage(markdown: String(contentsOfFile: ChildProcess.packageRoot + "/docs/GUIDE.md", encoding: .utf8))
    }

    @Test func everySwiftBlockNamesTheFileItGoesTo() throws {
        let guide = try Self.guide()
        #expect(guide.files.keys.sorted() == [
            "Package.swift",
            "Sources/LibraryApp/Book.swift",
            "Sources/LibraryApp/Library.swift",
            "Sources/LibraryApp/LibraryEffects.swift",
            "Sources/library-node/LibraryNode.swift",
            "Sources/library-node/LibrarySchema.swift",
            "Tests/LibraryAppTests/LibraryTests.swift",
            "Tests/LibraryAppTests/LocalStoreTests.swift",
            "Tests/LibraryAppTests/ShapeChangeTests.swift",
        ])
        #expect(guide.files["Package.swift"]?.hasPrefix("// swift-tools-version:6.0\n") == true)
        #expect(throws: GuidePackage.UnnamedBlock.self) { try GuidePackage(markdown: "text\n```swift\nlet x = 1\n```\n") }
        #expect(throws: GuidePackage.UnnamedBlock.self) { try GuidePackage(markdown: "```swift\n// Package.swift\nlet x = 1\n```\n") }
        let joined = try GuidePackage(markdown: "```swift\n// Sources/A/A.swift\nlet a = 1\n```\nprose\n```swift\n// Sources/A/A.swift\nlet b = 2\n```\n")
        #expect(joined.files == ["Sources/A/A.swift": "let a = 1\nlet b = 2\n"])
        #expect(try GuidePackage(markdown: "```sh\nswift build\n```\n```text\nlet x\n```\n").files.isEmpty)
    }

    /// The guide shows the versioned dependency a user writes; the test builds against this checkout.
    @Test func theManifestShowsAVersionedDependencyThatTheBuildReplacesWithThisCheckout() throws {
        let guide = try Self.guide()
        let manifest = try #require(guide.files["Package.swift"])
        #expect(manifest.contains(#".package(url: "https://git.example.com/reactorbus/ReactorBus.git", from: "0.1.0"),"#))
        let built = try #require(try guide.files(dependingOn: "/checkout")["Package.swift"])
        #expect(built == manifest.replacingOccurrences(of: #".package(url: "https://git.example.com/reactorbus/ReactorBus.git", from: "0.1.0")"#,
                                                        with: #".package(name: "ReactorBus", path: "/checkout")"#))
        #expect(throws: GuidePackage.NoVersionedDependency.self) { try GuidePackage(markdown: "```swift\n// swift-tools-version:6.0\nlet x = 1\n```\n").files(dependingOn: "/x") }
    }

    /// Every `library-node COMMAND` the guide runs is a command of the node kit.
    @Test func theGuidesCommandLinesUseTheKitsCommands() throws {
        let commands = ["authority", "worker", "send", "observe", "run", "journal", "replay", "keygen", "demo", "--help"]
        let used = try Self.guide().shellBlocks.flatMap { $0.split(separator: "\n") }
            .filter { $0.hasPrefix("library-node ") }
            .map { String($0.split(separator: " ")[1]) }
        #expect(used.count >= 15, "\(used)")
        #expect(used.filter { !commands.contains($0) } == [])
    }
}
