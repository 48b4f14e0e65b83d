import ArgumentParsing
import ReactorApps
import ReactorCore
@testable import ReactorNodeKit
import Testing
import TestTraits

/// The kit's registry of apps: data given by the program, checked once, and what `--app` resolves to.
@Suite(.spawnsProcesses) struct AppRegistryTests {
    /// Says which reactor and handler the registry handed over.
    struct TypeNames: AppVisitor {
        func visit<R: Reactor, H: EffectHandler>(reactor: R, effects: H) async throws -> String where H.Effect == R.Effect, H.Mutation == R.Mutation {
            "\(R.self) \(H.self)"
        }
    }

    static let delay = AppOption("effect-delay", "SECONDS", help: "wait first")
    static let counter = App("counter", reactor: Counter(), options: [delay]) { values throws(AppOptionError) in
        CounterEffects(delay: try values.seconds("effect-delay") ?? .zero)
    }
    static let primes = App("primes", reactor: Primes(), options: [delay]) { _ in PrimesEffects() }

    static func configurationMessage(_ apps: [App]) -> String? {
        do {
            _ = try AppRegistry(apps)
            return nil
        } catch {
            guard case .configuration(let message) = error else { return "not a configuration error: \(error)" }
            return message
        }
    }

    static func parse(_ node: NodeProgram, _ arguments: [String]) throws -> ParsedArguments {
        try #require(try WorkerCommand.spec(node).parse(arguments))
    }

    @Test func noAppsAnEmptyNameOrANameTwiceAreRefused() {
        #expect(Self.configurationMessage([]) == "no apps registered: pass at least one App to ReactorNodeKit.main(apps:)")
        #expect(Self.configurationMessage([App("", reactor: Counter(), effects: CounterEffects())]) == "an app has an empty name")
        #expect(Self.configurationMessage([Self.counter, Self.primes, Self.counter]) == "two apps are named 'counter'")
        #expect(Self.configurationMessage([Self.counter, Self.primes]) == nil)
    }

    @Test func theOnlyAppIsTheDefaultAndHelpNamesTheProgram() async throws {
        let node = NodeProgram(name: "tally", apps: try AppRegistry([Self.counter]))
        #expect(node.apps.appOption.defaultValue == "counter")
        #expect(node.apps.appOption.isRequired == false)
        let arguments = try Self.parse(node, [])
        #expect(try await node.apps.visit(arguments, TypeNames()) == "Counter CounterEffects")
        #expect(WorkerCommand.spec(node).help.hasPrefix("tally worker"))
        #expect(node.usage.contains("Usage: tally COMMAND [options]"))
    }

    @Test func withSeveralAppsAMissingOrUnknownNameListsThem() async throws {
        let node = NodeProgram(name: "tally", apps: try AppRegistry([Self.counter, Self.primes]))
        #expect(node.apps.appOption.defaultValue == nil)
        for (arguments, message) in [([String](), "worker: missing '--app NAME' (or REACTOR_APP); registered apps: counter, primes"),
                                     (["--app", "ledger"], "unknown app 'ledger'; known apps: counter, primes")] {
            let parsed = try Self.parse(node, arguments)
            do {
                _ = try await node.apps.visit(parsed, TypeNames())
                Issue.record("\(arguments) was accepted")
            } catch CLIError.usage(let text) {
                #expect(text == message)
            }
        }
        #expect(try await node.apps.visit(try Self.parse(node, ["--app", "primes"]), TypeNames()) == "Primes PrimesEffects")
    }

    @Test func appOptionsAreListedOnceAndABadValueIsAUsageError() async throws {
        let node = NodeProgram(name: "tally", apps: try AppRegistry([Self.counter, Self.primes]))
        #expect(node.apps.effectOptions.map(\.name) == ["effect-delay"])
        #expect(WorkerCommand.spec(node).options.filter { $0.name == "effect-delay" }.count == 1)
        let bad = try Self.parse(node, ["--app", "counter", "--effect-delay", "soon"])
        do {
            _ = try await node.apps.visit(bad, TypeNames())
            Issue.record("a bad --effect-delay was accepted")
        } catch CLIError.usage(let text) {
            #expect(text == "worker: '--effect-delay soon' must be a positive number of seconds")
        }
        // Another app ignores the option, as reactor-node's primes always did.
        #expect(try await node.apps.visit(try Self.parse(node, ["--app", "primes", "--effect-delay", "soon"]), TypeNames()) == "Primes PrimesEffects")
    }

    @Test func anUnknownCommandIsAUsageErrorNamingTheProgram() async throws {
        let node = NodeProgram(name: "tally", apps: try AppRegistry([Self.counter]))
        #expect(await node.run(["fly"], environment: [:]) == 64)
        #expect(await node.run(["--help"], environment: [:]) == 0)
    }
}

