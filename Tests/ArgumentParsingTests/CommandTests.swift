import ArgumentParsing
import Testing

@Suite struct CommandTests {
    let command = Command(
        name: "worker",
        summary: "runs effects",
        options: [
            .value("app", "NAME", help: "the app", required: true),
            .value("concurrency", "N", help: "effects at once", default: "4"),
            .value("log-level", "LEVEL", help: "stderr detail", default: "info"),
            .flag("json", help: "print JSON"),
        ],
        positionalName: "ACTION"
    )

    @Test func valuesComeFromTheCommandLineThenTheEnvironmentThenDefaults() throws {
        let parsed = try #require(try command.parse(
            ["--app", "counter", "--log-level=debug", "x", "y"],
            environment: ["REACTOR_CONCURRENCY": "8", "REACTOR_LOG_LEVEL": "error", "REACTOR_JSON": "1"]
        ))
        #expect(parsed.values == ["app": "counter", "concurrency": "8", "log-level": "debug"])
        #expect(parsed.flags == ["json"])
        #expect(parsed.positionals == ["x", "y"])
        #expect(try parsed.int("concurrency", in: 1...64) == 8)
        #expect(parsed.given == ["app", "concurrency", "log-level"])
    }

    @Test func defaultsApplyWhenNothingElseSetsAnOption() throws {
        let parsed = try #require(try command.parse(["--app", "primes"]))
        #expect(parsed.values == ["app": "primes", "concurrency": "4", "log-level": "info"])
        #expect(parsed.flags.isEmpty)
        #expect(parsed.isGiven("app") && !parsed.isGiven("concurrency") && !parsed.isGiven("log-level"))
    }

    @Test func mistakesAreOneLineUsageErrors() {
        #expect(throws: UsageError("worker: unknown option '--colour'; see 'reactor-node worker --help'")) {
            try command.parse(["--app", "x", "--colour", "red"])
        }
        #expect(throws: UsageError("worker: '--app' needs a value (NAME)")) {
            try command.parse(["--app"])
        }
        #expect(throws: UsageError("worker: missing '--app NAME' (or REACTOR_APP); see 'reactor-node worker --help'")) {
            try command.parse([])
        }
        #expect(throws: UsageError("worker: '--json' takes no value")) {
            try command.parse(["--app", "x", "--json=yes"])
        }
        #expect(throws: UsageError("worker: '--concurrency zero' must be a whole number in 1...64")) {
            try command.parse(["--app", "x", "--concurrency", "zero"])?.int("concurrency", in: 1...64)
        }
        #expect(UsageError.exitCode == 64)
    }

    @Test func secondsArePositiveFiniteAndAtMostABillion() throws {
        let seconds = Command(name: "worker", summary: "runs effects", options: [.value("timeout", "SECONDS", help: "the limit")])
        #expect(try seconds.parse(["--timeout", "0.25"])?.seconds("timeout") == .milliseconds(250))
        #expect(try seconds.parse(["--timeout", "1e9"])?.seconds("timeout") == .seconds(1_000_000_000))
        for raw in ["0", "-1", "inf", "nan", "soon"] {
            #expect(throws: UsageError("worker: '--timeout \(raw)' must be a positive number of seconds")) {
                try seconds.parse(["--timeout", raw])?.seconds("timeout")
            }
        }
        // Once a crash (the milliseconds overflowed), now a usage error.
        for raw in ["1000000001", "1e20", "1e300"] {
            #expect(throws: UsageError("worker: '--timeout \(raw)' must be at most 1000000000 seconds (about 31 years)")) {
                try seconds.parse(["--timeout", raw])?.seconds("timeout")
            }
        }
    }

    @Test func helpIsAskedForNotAnError() throws {
        #expect(try command.parse(["--app", "x", "--help"]) == nil)
        #expect(command.help.contains("--concurrency N"))
        #expect(command.help.contains("env REACTOR_LOG_LEVEL"))
    }

    @Test func hiddenOptionsAreAcceptedButNotListed() throws {
        let bench = Command(name: "bench", summary: "measures", options: [
            .flag("quick", help: "shorter"),
            .value("actions", "N", help: "scale", default: "10").hidden(),
        ], hidden: true)
        #expect(bench.isHidden)
        #expect(try bench.parse(["--actions", "3"])?.values["actions"] == "3")
        #expect(bench.help.contains("--quick"))
        #expect(!bench.help.contains("--actions"))
    }

    @Test func environmentNamesFollowTheFlagNames() {
        #expect(Option.value("curve-server-key", "FILE", help: "").environmentName == "REACTOR_CURVE_SERVER_KEY")
    }
}
