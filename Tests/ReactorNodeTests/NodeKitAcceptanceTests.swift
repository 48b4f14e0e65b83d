import Foundation
import Testing
import TestSupport

extension Tag {
    /// Tests that build a whole package of their own with `swift build` (minutes, not seconds).
    @Tag static var acceptance: Self
}

/// Issue 15's promise: a user writes a reactor, adds this package as a dependency and a few lines,
/// and gets a distributed node program. Each test writes a SwiftPM package of a user's and runs
/// the real `swift build` on it; those that build (this one's and the guide's) share one scratch
/// directory (``DependentPackages``), so this package compiles once for both.
///
/// Not `.spawnsProcesses`: a test here holds the machine for minutes, at the lowest CPU priority
/// (see ``swift(_:_:scratch:timeout:)``), and would keep a process slot from the short tests
/// that need one for all that time.
@Suite(.serialized, .tags(.acceptance)) struct NodeKitAcceptanceTests {
    /// The user's reactor: three actions, one of them through an effect. (Not counted below.)
    static let reactor = #"""
    import ReactorCore

    struct Tally: Reactor {
        enum Action: Codable, Sendable { case add(n: Int), reset, addLater(n: Int) }
        enum Mutation: Codable, Sendable { case added(n: Int), cleared }
        enum Effect: Codable, Sendable { case addAfterCheck(n: Int) }
        struct State: Codable, Sendable { var total = 0 }

        var initialState: State { State() }

        func mutate(state: State, action: Action) -> Mutations<Mutation, Effect> {
            switch action {
            case .add(let n): [.added(n: n)]
            case .reset: [.cleared]
            case .addLater(let n): Mutations(async: .addAfterCheck(n: n))
            }
        }

        func reduce(state: inout State, mutation: Mutation) {
            switch mutation {
            case .added(let n): state.total += n
            case .cleared: state.total = 0
            }
        }
    }
    """#

    /// Everything else the user writes: the effect handler and the program.
    static let program = #"""
    import ReactorCore
    import ReactorNodeKit

    struct TallyEffects: EffectHandler {
        func run(_ effect: Tally.Effect, emit: Emitter<Tally.Mutation>) async throws {
            switch effect {
            case .addAfterCheck(let n): await emit(.added(n: n))
            }
        }
    }

    @main struct TallyNode {
        static func main() async {
            await ReactorNodeKit.main(apps: [App("tally", reactor: Tally(), effects: TallyEffects())])
        }
    }
    """#

    /// The user's manifest, depending on this package as `dependency` names it as `identity`.
    static func manifest(dependency: String, identity: String) -> String {
        #"""
        // swift-tools-version:6.0
        import PackageDescription

        let package = Package(
            name: "tally",
            dependencies: [\#(dependency)],
            targets: [
                .executableTarget(name: "tally", dependencies: [
                    .product(name: "ReactorNodeKit", package: "\#(identity)"),
                    .product(name: "ReactorCore", package: "\#(identity)"),
                ]),
            ]
        )
        """#
    }

    /// Writes the user's package into `package` (a directory named `tally`).
    static func writeUserPackage(dependency: String, identity: String, to package: String) throws {
        try DependentPackages.write([
            "Package.swift": manifest(dependency: dependency, identity: identity),
            "Sources/tally/Tally.swift": reactor,
            "Sources/tally/TallyNode.swift": program,
        ], to: package)
    }

    /// `swift COMMAND` (`build`, `test`) of a user's package, bounded by `timeout`.
    ///
    /// At the lowest CPU priority (`nice -n 19`): a build takes both cores for minutes, and in a
    /// parallel run the other tests, which wait for events against deadlines, must not queue
    /// behind the compiler. The build gets whatever they leave.
    static func swift(_ command: [String], _ package: String, scratch: String, timeout: Duration) async throws -> ChildProcess {
        let swift = try ChildProcess.program(executable: "/usr/bin/env", arguments: ["nice", "-n", "19", "swift"] + command + ["--package-path", package, "--scratch-path", scratch],
                                             name: "swift-" + (command.first ?? ""))
        await swift.waitForExit(timeout: timeout)
        return swift
    }

    @Test func theUsersLinesOtherThanTheReactorAre26OfAtMost30() {
        let lines = (Self.manifest(dependency: #".package(path: "../ReactorBus")"#, identity: "ReactorBus") + "\n" + Self.program)
            .split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        #expect(lines.count == 26, "\(lines.count) lines")
    }

    @Test(.timeLimit(.minutes(20)))
    func aPackageDependingOnThisOneByPathBuildsANodeThatRunsInFourProcesses() async throws {
        let root = ChildProcess.packageRoot
        let identity = URL(fileURLWithPath: root).lastPathComponent
        let package = DependentPackages.directory("tally")
        try Self.writeUserPackage(dependency: #".package(path: "\#(root)")"#, identity: identity, to: package)
        // This package compiles again in the shared scratch directory, once: minutes on a busy machine.
        let build = try await Self.swift(["build"], package, scratch: DependentPackages.scratch, timeout: .seconds(15 * 60))
        try #require(build.reap() == 0, "swift build failed: \(build.output.suffix(30).joined(separator: "\n"))\(build.diagnostics)")
        try await Self.runInFourProcesses(tally: DependentPackages.scratch + "/debug/tally")
    }

    /// A versioned dependency, the way a user outside this repository adds it: SwiftPM accepts one
    /// only if none of its targets has `unsafeFlags`. A git copy of this package tagged 0.1.0,
    /// resolved by `from: "0.1.0"`, builds and runs the same four processes. (Its own scratch
    /// directory: the shared one holds this package as a path dependency.)
    @Test(.timeLimit(.minutes(20)))
    func aPackageDependingOnATaggedGitCopyOfThisOneResolvesTheTagAndBuildsANodeThatRuns() async throws {
        let copies = NSTemporaryDirectory() + "reactorbus-kit-git-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: copies) }
        let repository = copies + "/ReactorBus"
        try Self.copyTrackedFiles(to: repository)
        for arguments in [["init", "-q"], ["add", "-A"], ["-c", "user.name=test", "-c", "user.email=test@example.invalid", "commit", "-q", "-m", "copy"], ["tag", "0.1.0"]] {
            let git = try ChildProcess.program(executable: "/usr/bin/env", arguments: ["git", "-C", repository] + arguments, name: "git")
            try #require(await git.waitForExit(timeout: .seconds(120)) == 0, "git \(arguments): \(git.diagnostics)")
        }
        let directory = NSTemporaryDirectory() + "reactorbus-kit-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let package = directory + "/tally"
        try Self.writeUserPackage(dependency: #".package(url: "file://\#(repository)", from: "0.1.0")"#, identity: "ReactorBus", to: package)
        let build = try await Self.swift(["build"], package, scratch: directory + "/build", timeout: .seconds(15 * 60))
        try #require(build.reap() == 0, "swift build failed: \(build.output.suffix(30).joined(separator: "\n"))\(build.diagnostics)")

        // Resolved as a version, to the tag: not as a branch or a revision.
        let resolved = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: package + "/Package.resolved"))) as? [String: Any]
        let pins = try #require(resolved?["pins"] as? [[String: Any]], "\(String(describing: resolved))")
        #expect(pins.count == 1)
        #expect(pins.first?["identity"] as? String == "reactorbus")
        let state = pins.first?["state"] as? [String: Any]
        #expect(state?["version"] as? String == "0.1.0", "\(String(describing: state))")
        #expect(state?["branch"] == nil)

        try await Self.runInFourProcesses(tally: directory + "/build/debug/tally")
    }

    /// Runs the user's program as authority, worker, observer and sender to an exact final state,
    /// then stops them with SIGTERM.
    static func runInFourProcesses(tally: String) async throws {
        func node(_ arguments: [String], _ name: String) throws -> ChildProcess {
            try ChildProcess.program(executable: tally, arguments: arguments, name: name)
        }

        // One app registered: no --app anywhere.
        let authority = try node(["authority", "--actions", "tcp://127.0.0.1:*", "--workers", "tcp://127.0.0.1:*", "--feed", "tcp://127.0.0.1:*"], "authority")
        let endpoints = try await authority.endpoints()
        let worker = try node(["worker", "--authority", endpoints.workers], "worker")
        let observer = try node(["observe", "--feed", endpoints.feed, "--actions", endpoints.actions, "--json"], "observer")
        #expect(await observer.waitForLine { $0 == #"{"version":0,"state":{"total":0}}"# } != nil, "\(observer.output)\(observer.diagnostics)")

        func send(_ actions: [String], _ extra: [String] = []) async throws -> ChildProcess {
            let sender = try node(["send", "--actions", endpoints.actions] + extra + actions, "send")
            await sender.waitForExit(timeout: .seconds(60))
            return sender
        }
        for batch in [[#"{"add":{"n":100}}"#], [#"{"reset":{}}"#]] {
            let sender = try await send(batch)
            #expect(sender.reap() == 0, "\(sender.diagnostics)")
        }
        let sender = try await send([#"{"add":{"n":5}}"#, #"{"addLater":{"n":3}}"#], ["--repeat", "2"])
        #expect(sender.reap() == 0, "\(sender.diagnostics)")
        #expect(sender.output.last?.contains(#""sent":4,"acked":4,"failed":0"#) == true, "\(sender.output)")
        // An action the reactor does not have is refused before anything is sent.
        let wrong = try await send([#"{"multiply":{"n":2}}"#])
        #expect(wrong.reap() == 64)
        #expect(wrong.diagnostics.hasSuffix(#"tally: send: '{"multiply":{"n":2}}' is not an action of this app: 'multiply' is not a case of Tally.Action; its cases are add, reset, addLater"#),
                "\(wrong.diagnostics)")

        // add 100, reset, then 2 × (add 5, and 3 added by the worker): 6 mutations, total 16.
        let final = await observer.waitForLine(timeout: .seconds(30)) { $0.contains(#""total":16"#) }
        #expect(final == #"{"version":6,"state":{"total":16}}"#, "\(observer.output)\(observer.diagnostics)")
        let once = try node(["observe", "--actions", endpoints.actions, "--once", "--json"], "observe-once")
        #expect(await once.waitForExit() == 0, "\(once.diagnostics)")
        #expect(once.output == [#"{"version":6,"state":{"total":16}}"#])

        for process in [observer, worker, authority] {
            process.signal(SIGTERM)
            #expect(await process.waitForExit(timeout: .seconds(15)) == 0, "\(process.diagnostics)")
        }
        #expect(worker.diagnostics.contains("stopped after 2 job(s) done, 0 failed"), "\(worker.diagnostics)")
        #expect(authority.diagnostics.contains("stopped at version 6 after 6 action(s)"), "\(authority.diagnostics)")
    }

    /// Copies the files git tracks in this package (its sources, not its build) to `destination`.
    static func copyTrackedFiles(to destination: String) throws {
        let root = ChildProcess.packageRoot
        let list = Pipe()
        let git = Process()
        git.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        git.arguments = ["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
        git.standardOutput = list
        try git.run()
        let data = list.fileHandleForReading.readDataToEndOfFile()
        git.waitUntilExit()
        try #require(git.terminationStatus == 0)
        for path in data.split(separator: 0).map({ String(decoding: $0, as: UTF8.self) }) {
            let target = destination + "/" + path
            guard FileManager.default.fileExists(atPath: root + "/" + path) else { continue }
            try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: root + "/" + path, toPath: target)
        }
    }
}
