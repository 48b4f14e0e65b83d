// swift-tools-version:6.0
import PackageDescription

// An order-fulfilment app on ReactorBus: a reactor, its effects, a node program with every
// command of reactor-node, and its tests. It uses ReactorBus as any other package would: public
// API only, through the products.
let package = Package(
    name: "OrderFulfilment",
    dependencies: [
        // This repository, two directories up. `name:` lets the products below say "ReactorBus"
        // whatever its checkout's directory is called (a path dependency is otherwise known by
        // that directory's name). Your own package: `.package(url: ..., from: ...)`, see
        // docs/GUIDE.md.
        .package(name: "ReactorBus", path: "../.."),
    ],
    targets: [
        // The app: the reactor and what its effects do. Pure Swift, no I/O of its own.
        .target(name: "OrderFulfilment", dependencies: [
            .product(name: "ReactorCore", package: "ReactorBus"),
        ]),
        // The node program: authority, worker, send, observe, run, keygen for the app.
        .executableTarget(name: "order-node", dependencies: [
            "OrderFulfilment",
            .product(name: "ReactorNodeKit", package: "ReactorBus"),
        ]),
        // Unit tests with TestStore, and one test of order-node in four processes (it depends on
        // order-node so that `swift test` builds it next to the tests).
        .testTarget(name: "OrderFulfilmentTests", dependencies: [
            "OrderFulfilment",
            "order-node",
            .product(name: "ReactorCore", package: "ReactorBus"),
            .product(name: "ReactorTesting", package: "ReactorBus"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
