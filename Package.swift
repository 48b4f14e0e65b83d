// swift-tools-version:6.0
import PackageDescription

// No target has `unsafeFlags`: SwiftPM refuses them in a versioned dependency
// (`.package(url:from:)`), and a user's package could not depend on this one. Release builds are
// SwiftPM's own (`-O`, whole module, the compiler's default cross-module optimisation).
let package = Package(
    name: "ReactorBus",
    // Linux only (built and tested on Debian 12): storage calls fdatasync and Glibc directly and
    // has never been built on macOS, so no `platforms` are claimed.
    products: [
        .library(name: "ReactorCore", targets: ["ReactorCore"]),
        .library(name: "ReactorBus", targets: ["ReactorBus"]),
        // The one-line-per-event logger every node takes (`Logger(label:level:sink:)`).
        .library(name: "ReactorLog", targets: ["ReactorLog"]),
        // Exhaustive tests of a reactor (TestStore): `.product(name: "ReactorTesting", package: "ReactorBus")`
        // in a test target's dependencies.
        .library(name: "ReactorTesting", targets: ["ReactorTesting"]),
        // The layers under ReactorBus are products only so that a user can name the few types
        // ReactorBus's own API hands out (ZMQContext, ZMQError; ErrorCode, ProtocolError;
        // PersistenceError, FsyncPolicy, ...). Everything else in them is `package` access.
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
        .library(name: "ReactorWire", targets: ["ReactorWire"]),
        .library(name: "ReactorStorage", targets: ["ReactorStorage"]),
        .library(name: "MessagePack", targets: ["MessagePack"]),
        // The reactor-node command line as a library: a user's own node program registers its apps
        // and gets every command (README, "Your own node").
        .library(name: "ReactorNodeKit", targets: ["ReactorNodeKit"]),
        // Metrics as values (Histogram, MetricFamily) and their Prometheus text: the nodes'
        // metrics hand out its types. The HTTP server for them (MetricsHTTP) is the CLI's.
        .library(name: "ReactorMetrics", targets: ["ReactorMetrics"]),
        .executable(name: "reactor-node", targets: ["reactor-node"]),
        .executable(name: "reactor-bench", targets: ["reactor-bench"]),
    ],
    targets: [
        // C libraries, seen through module maps only.
        .systemLibrary(
            name: "CZMQ",
            pkgConfig: "libzmq",
            providers: [.apt(["libzmq3-dev"])]
        ),
        .systemLibrary(
            name: "CMsgPack",
            pkgConfig: "msgpack",
            providers: [.apt(["libmsgpack-dev"])]
        ),
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),

        // Pure reactor semantics: no I/O, no threads, no ZeroMQ.
        .target(name: "ReactorCore"),

        // Codable <-> MessagePack over msgpack-c.
        .target(name: "MessagePack", dependencies: ["CMsgPack"]),

        // The one helper that retries POSIX calls interrupted by a signal (EINTR).
        .target(name: "SystemCalls"),

        // Small utilities of our own (no outside packages can be fetched).
        .target(name: "ReactorLog", dependencies: ["SystemCalls"]),
        .target(name: "ArgumentParsing"),

        // The ZeroMQ wrapper: the only Swift module that imports CZMQ.
        .target(name: "ZeroMQ", dependencies: ["CZMQ", "SystemCalls"]),

        // Metrics as values and the Prometheus text exposition format: pure, no I/O.
        .target(name: "ReactorMetrics"),

        // The /metrics HTTP endpoint and the inspector's router over libmicrohttpd: the only Swift
        // module that imports CMicroHTTPD.
        .target(name: "MetricsHTTP", dependencies: ["CMicroHTTPD", "ReactorMetrics"]),

        // Leader election and fencing for the authorities on etcd (its v3 JSON gateway over
        // libcurl): the only Swift module that imports CCurl.
        .target(name: "Coordination", dependencies: ["CCurl", "SystemCalls"]),

        // The wire protocol: message types, headers and their MessagePack codecs.
        .target(name: "ReactorWire", dependencies: ["ReactorCore", "MessagePack"]),

        // Storage: journal, segments, snapshots, POSIX file access, CRC-32C.
        .target(name: "ReactorStorage", dependencies: ["SystemCalls"]),

        // The nodes a user calls (authority, worker, client, observer), their configurations and
        // errors, and the authority's internals (dispatcher, client ledger, job queues).
        .target(
            name: "ReactorBus",
            dependencies: ["ZeroMQ", "ReactorWire", "ReactorStorage", "ReactorCore", "MessagePack", "ReactorLog", "ReactorMetrics", "SystemCalls"]
        ),

        // TestStore: exhaustive tests of a reactor on the Sequencer the authority runs; reports
        // through swift-testing or XCTest. Pure (no ZeroMQ, no I/O).
        .target(name: "ReactorTesting", dependencies: ["ReactorCore"]),

        // Example applications shipped with the CLI (and used by tests and benchmarks).
        .target(name: "ReactorApps", dependencies: ["ReactorCore"]),

        // The CLI of every node (commands, options, signals, exit codes), for any registered apps.
        .target(
            name: "ReactorNodeKit",
            dependencies: ["ReactorBus", "ZeroMQ", "ReactorWire", "ReactorStorage", "ReactorCore", "ReactorApps", "MessagePack", "ReactorLog",
                           "ReactorMetrics", "MetricsHTTP", "ArgumentParsing", "SystemCalls", "Coordination"]
        ),
        // The shipped node: the kit with the example apps.
        .executableTarget(name: "reactor-node", dependencies: ["ReactorNodeKit", "ReactorApps"]),

        // The one process harness of the package (children with line-collected stdout, stderr
        // files, bounded waits, reaped on drop), for the multi-process tests and reactor-bench;
        // a raw HTTP client for the metrics endpoint's tests; and a real etcd on loopback for the coordination tests.
        // A plain target rather than a test target so that the benchmark can use it too; not a product.
        .target(name: "TestSupport", dependencies: ["SystemCalls", "ZeroMQ"]),

        // The benchmark (`make bench`): every role in its own process, the authorities and
        // workers being the real reactor-node built next to it.
        .executableTarget(
            name: "reactor-bench",
            dependencies: ["ReactorBus", "ZeroMQ", "ReactorWire", "ReactorCore", "ReactorApps", "MessagePack", "CMsgPack", "ReactorLog",
                           "ArgumentParsing", "TestSupport", "SystemCalls"]
        ),

        // Codec benchmark: Codable path vs hand-written msgpack-c calls (`make bench-codec`).
        .executableTarget(name: "msgpack-bench", dependencies: ["MessagePack", "CMsgPack"]),

        // libFuzzer harnesses (docs/FUZZING.md). A normal build makes them plain programs that
        // replay inputs from files or directories, so they always compile against the current
        // code; `scripts/fuzz.sh` builds them with `-sanitize=fuzzer,address -DREACTORBUS_LIBFUZZER`,
        // which hands their `main` to libFuzzer. They live in this package (not a separate one)
        // because fuzz-authority drives the `package`-access AuthorityEngine directly.
        .systemLibrary(name: "CLibFuzzer", path: "Fuzz/Sources/CLibFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer"], path: "Fuzz/Sources/FuzzSupport"),
        .executableTarget(
            name: "fuzz-msgpack",
            dependencies: ["FuzzSupport", "MessagePack", "ReactorCore", "ReactorApps", "ReactorBus", "ReactorWire"],
            path: "Fuzz/Sources/fuzz-msgpack"
        ),
        .executableTarget(
            name: "fuzz-authority",
            dependencies: ["FuzzSupport", "ReactorBus", "ReactorWire", "ReactorStorage", "ReactorCore", "ReactorApps", "ReactorLog", "MessagePack"],
            path: "Fuzz/Sources/fuzz-authority"
        ),

        // A small reactor the core's and the authority's tests share.
        .target(name: "ReactorFixtures", dependencies: ["ReactorCore"], path: "Tests/Fixtures/ReactorFixtures"),
        // Two releases of one app ("tally", schema 1 and 2) and a node program that runs either:
        // the schema-evolution tests upgrade a data directory from one to the other.
        .target(name: "SchemaFixtures", dependencies: ["ReactorBus", "ReactorCore", "MessagePack"], path: "Tests/Fixtures/SchemaFixtures"),
        .executableTarget(name: "schema-fixture", dependencies: ["ReactorNodeKit", "SchemaFixtures"], path: "Tests/Fixtures/schema-fixture"),
        // The `.spawnsProcesses` suite trait: at most a few tests that start processes run at once.
        .target(name: "TestTraits", path: "Tests/Support/TestTraits"),

        .testTarget(name: "ReactorCoreTests", dependencies: ["ReactorCore", "ReactorApps", "ReactorTesting", "ReactorFixtures"]),
        .testTarget(name: "ReactorTestingTests", dependencies: ["ReactorTesting", "ReactorCore", "ReactorApps"]),
        .testTarget(name: "MessagePackTests", dependencies: ["MessagePack", "CMsgPack"], resources: [.copy("Fixtures")]),
        .testTarget(name: "SystemCallsTests", dependencies: ["SystemCalls", "TestSupport"]),
        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ", "SystemCalls", "TestSupport"]),
        .testTarget(name: "ReactorWireTests", dependencies: ["ReactorWire", "ReactorCore", "MessagePack"]),
        .testTarget(name: "ReactorStorageTests", dependencies: ["ReactorStorage"]),
        .testTarget(name: "ReactorBusTests", dependencies: ["ReactorBus", "ZeroMQ", "ReactorWire", "ReactorStorage", "ReactorApps", "MessagePack", "ReactorMetrics", "TestSupport", "SchemaFixtures", "ReactorFixtures", "SystemCalls"]),
        .testTarget(name: "ArgumentParsingTests", dependencies: ["ArgumentParsing"]),
        .testTarget(name: "ReactorMetricsTests", dependencies: ["ReactorMetrics"]),
        .testTarget(name: "TestTraitsTests", dependencies: ["TestTraits"]),
        // Against a real etcd (/usr/bin/etcd) on loopback, started per test by TestSupport's EtcdServer.
        .testTarget(name: "CoordinationTests", dependencies: ["Coordination", "TestSupport", "TestTraits"]),
        .testTarget(name: "MetricsHTTPTests", dependencies: ["MetricsHTTP", "ReactorMetrics", "TestSupport"]),
        // Multi-process tests: spawn the real reactor-node (and reactor-bench) binaries on loopback.
        .testTarget(name: "ReactorNodeTests",
                    dependencies: ["ReactorBus", "ZeroMQ", "ReactorWire", "ReactorApps", "MessagePack", "TestSupport", "ReactorNodeKit", "ReactorCore", "Coordination", "ArgumentParsing", "reactor-node", "reactor-bench",
                                   "schema-fixture", "SchemaFixtures", "TestTraits"]),
    ],
    swiftLanguageModes: [.v6]
)
