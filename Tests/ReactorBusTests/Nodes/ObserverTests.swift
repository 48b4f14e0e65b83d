import Foundation
import MessagePack
import ReactorApps
@testable import ReactorBus
import ReactorCore
import ReactorWire
import Synchronization
import Testing
import ZeroMQ
import TestSupport

@Suite struct ObserverTests {
    private func state(_ count: Int) throws -> [UInt8] {
        try MessagePackEncoder().encode(Counter.State(count: count))
    }

    private func makeObserver(_ fake: FakeClientAuthority, _ context: ZMQContext, followMutations: Bool = false,
                              silence: Duration = .seconds(60)) throws -> Observer<Counter> {
        let configuration = ObserverConfiguration(feedEndpoint: fake.feedEndpoint, actionsEndpoint: fake.actionsEndpoint,
                                                  followMutations: followMutations, silenceTimeout: silence)
        return try Observer<Counter>(configuration: configuration, logger: quietLogger, context: context)
    }

    /// Collects what a stream yields on a task of its own, so the test can wait with a deadline.
    private func collect(_ stream: AsyncStream<Snapshot<Counter.State>>) -> (Box<[Snapshot<Counter.State>]>, Task<Void, Never>) {
        let box = Box<[Snapshot<Counter.State>]>([])
        let task = Task {
            for await snapshot in stream { box.value.append(snapshot) }
        }
        return (box, task)
    }

    private func waitForSubscriptions(_ fake: FakeClientAuthority, _ topics: Set<String>) async -> Bool {
        await fake.eventually { topics.isSubset(of: Set($0.subscriptions)) }
    }

    @Test func followsTheFetchedSnapshotThenOnlyNewerOnesAndRefetchesWhenHeartbeatsRunAhead() async throws {
        try await FakeClientAuthority.with { context, fake in
            fake.setSnapshot(version: 5, actionSeq: 5, payload: try state(5))
            let observer = try makeObserver(fake, context)
            let (delivered, reader) = collect(observer.snapshots())
            try observer.start()

            // First the snapshot fetched on the actions socket.
            #expect(await FakeClientAuthority.eventually { delivered.value.count == 1 })
            #expect(delivered.value.first == Snapshot(version: 5, state: Counter.State(count: 5)))
            #expect(fake.recorded.snapshotRequests == 1)

            // Then feed snapshots: only newer versions; garbage is counted and dropped.
            #expect(await waitForSubscriptions(fake, ["snapshot", "heartbeat"]))
            for version: UInt64 in [4, 5, 7] {
                fake.publish(.snapshot(version: version, actionSeq: version, payload: try state(Int(version))))
            }
            fake.publish(frames: [Array("snapshot".utf8), [0xc1], [0x80]])
            fake.publish(frames: [Array("heartbeat".utf8), Array("not msgpack".utf8)])
            for version: UInt64 in [6, 9] {
                fake.publish(.snapshot(version: version, actionSeq: version, payload: try state(Int(version))))
            }
            #expect(await FakeClientAuthority.eventually { delivered.value.count == 3 })
            #expect(delivered.value.map(\.version) == [5, 7, 9])
            #expect(delivered.value.map(\.state.count) == [5, 7, 9])
            var metrics = observer.metrics
            #expect(metrics.staleIgnored == 3)
            #expect(metrics.malformed == 2)
            #expect(metrics.refetches == 0)

            // The authority moved on and the observer lost that snapshot: heartbeats show it.
            fake.setSnapshot(version: 12, actionSeq: 11, payload: try state(12))
            var published = 0
            while fake.recorded.snapshotRequests < 2 && published < 500 {
                fake.publish(.heartbeat(version: 12, actionSeq: 11))
                published += 1
                _ = await fake.eventually(within: .milliseconds(20)) { $0.snapshotRequests >= 2 }
            }
            #expect(fake.recorded.snapshotRequests == 2)
            #expect(await FakeClientAuthority.eventually { delivered.value.count == 4 })
            #expect(delivered.value.map(\.version) == [5, 7, 9, 12])
            metrics = observer.metrics
            #expect(metrics.refetches == 1)
            #expect(metrics.heartbeats >= 2)
            #expect(metrics.snapshotsDelivered == 4)

            observer.stop()
            await observer.wait()
            await reader.value
            #expect(delivered.value.map(\.version) == [5, 7, 9, 12], "the stream ends when the observer stops")
        }
    }

    @Test func aLateSubscriberStartsWithTheCurrentSnapshotAndRawStreamsCarryTheBytes() async throws {
        try await FakeClientAuthority.with { context, fake in
            let payload = try state(3)
            fake.setSnapshot(version: 3, actionSeq: 2, payload: payload)
            let observer = try makeObserver(fake, context)
            let (first, firstReader) = collect(observer.snapshots())
            try observer.start()
            #expect(await FakeClientAuthority.eventually { first.value.count == 1 })

            let raw = Box<[UInt64]>([])
            let rawStream = observer.rawSnapshots()
            let rawReader = Task {
                for await snapshot in rawStream {
                    #expect(snapshot.payload == (try? MessagePackEncoder().encode(Counter.State(count: Int(snapshot.version)))))
                    raw.value.append(snapshot.version)
                }
            }
            let (late, lateReader) = collect(observer.snapshots())
            #expect(await FakeClientAuthority.eventually { late.value.count == 1 && raw.value.count == 1 })
            #expect(late.value.map(\.version) == [3])
            #expect(raw.value == [3])

            #expect(await waitForSubscriptions(fake, ["snapshot"]))
            fake.publish(.snapshot(version: 4, actionSeq: 3, payload: try state(4)))
            #expect(await FakeClientAuthority.eventually { first.value.count == 2 && late.value.count == 2 && raw.value.count == 2 })
            #expect(raw.value == [3, 4])

            observer.stop()
            await observer.wait()
            await firstReader.value
            await lateReader.value
            await rawReader.value
            var ended = observer.snapshots().makeAsyncIterator()
            #expect(await ended.next() == nil, "a subscription after stop ends at once")
        }
    }

    @Test func aGapInMutationVersionsTriggersARefetch() async throws {
        try await FakeClientAuthority.with { context, fake in
            fake.setSnapshot(version: 10, actionSeq: 10, payload: try state(10))
            let observer = try makeObserver(fake, context, followMutations: true)
            let (delivered, reader) = collect(observer.snapshots())
            try observer.start()
            #expect(await FakeClientAuthority.eventually { delivered.value.count == 1 })
            #expect(await waitForSubscriptions(fake, ["snapshot", "heartbeat", "mutation"]))

            let increase = try MessagePackEncoder().encode(Counter.Mutation.increase)
            for version: UInt64 in [9, 10, 11] {
                fake.publish(.mutation(version: version, actionSeq: version, origin: .sync(index: 0), payload: increase))
            }
            #expect(await FakeClientAuthority.eventually { observer.metrics.mutations == 3 })
            #expect(observer.metrics.refetches == 0, "old and consecutive mutations are no gap")
            #expect(fake.recorded.snapshotRequests == 1)

            fake.setSnapshot(version: 13, actionSeq: 13, payload: try state(13))
            fake.publish(.mutation(version: 13, actionSeq: 13, origin: .sync(index: 0), payload: increase))
            #expect(await fake.eventually { $0.snapshotRequests == 2 })
            #expect(await FakeClientAuthority.eventually { delivered.value.count == 2 })
            #expect(delivered.value.map(\.version) == [10, 13])
            #expect(observer.metrics.refetches == 1)

            observer.stop()
            await observer.wait()
            await reader.value
        }
    }

    @Test func aSilentFeedTriggersARefetch() async throws {
        try await FakeClientAuthority.with { context, fake in
            fake.setSnapshot(version: 1, actionSeq: 1, payload: try state(1))
            let observer = try makeObserver(fake, context, silence: .milliseconds(150))
            let (delivered, reader) = collect(observer.snapshots())
            try observer.start()
            #expect(await FakeClientAuthority.eventually { delivered.value.count == 1 })
            fake.setSnapshot(version: 8, actionSeq: 8, payload: try state(8))
            #expect(await fake.eventually { $0.snapshotRequests >= 2 })
            #expect(await FakeClientAuthority.eventually { delivered.value.count == 2 })
            #expect(delivered.value.map(\.version) == [1, 8])
            #expect(observer.metrics.refetches >= 1)
            observer.stop()
            await observer.wait()
            await reader.value
        }
    }

    @Test func stopBeforeStartEndsStreams() async throws {
        let context = try ZMQContext()
        let observer = try Observer<Counter>(
            configuration: ObserverConfiguration(feedEndpoint: "tcp://127.0.0.1:1", actionsEndpoint: "tcp://127.0.0.1:1"),
            logger: quietLogger, context: context)
        var iterator = observer.snapshots().makeAsyncIterator()
        observer.stop()
        #expect(await iterator.next() == nil)
        await observer.wait()
        #expect(context.terminate(timeout: promptly))
    }
}

/// An observer created with the reactor keeps the state itself from feed mutations.
@Suite struct MutationFollowingObserverTests {
    private func state(_ count: Int) throws -> [UInt8] {
        try MessagePackEncoder().encode(Counter.State(count: count))
    }

    private func increase(_ version: UInt64) throws -> FeedMessage {
        .mutation(version: version, actionSeq: version, origin: .sync(index: 0), payload: try MessagePackEncoder().encode(Counter.Mutation.increase))
    }

    @Test func appliesEveryMutationWithTheReducerAndResyncsAfterAGap() async throws {
        try await FakeClientAuthority.with { context, fake in
            let payload = try state(5)
            fake.setSnapshot(version: 5, actionSeq: 5, payload: payload)
            var configuration = ObserverConfiguration(feedEndpoint: fake.feedEndpoint, actionsEndpoint: fake.actionsEndpoint, silenceTimeout: .seconds(60))
            configuration.maxMessageBytes = 1_024
            let observer = try Observer<Counter>(reactor: Counter(), configuration: configuration, logger: quietLogger, context: context)
            let delivered = Box<[Snapshot<Counter.State>]>([])
            let stream = observer.snapshots()
            let reader = Task { for await snapshot in stream { delivered.value.append(snapshot) } }
            try observer.start()
            #expect(await FakeClientAuthority.eventually { delivered.value.count == 1 })
            #expect(delivered.value.first == Snapshot(version: 5, state: Counter.State(count: 5)))
            #expect(await fake.eventually { Set(["mutation", "heartbeat"]).isSubset(of: Set($0.subscriptions)) })
            #expect(!fake.recorded.subscriptions.contains("snapshot"), "a mutation follower needs no feed snapshots")

            // Every version, one at a time: each delivered state is the exact one.
            for version: UInt64 in 6...9 {
                fake.publish(try increase(version))
                #expect(await FakeClientAuthority.eventually { delivered.value.last?.version == version })
            }
            #expect(delivered.value.map(\.version) == [5, 6, 7, 8, 9])
            #expect(delivered.value.map(\.state.count) == [5, 6, 7, 8, 9])
            // A repeated mutation is not applied twice.
            fake.publish(try increase(9))

            // A gap (10 and 11 lost): the observer fetches again and goes on from there.
            fake.setSnapshot(version: 12, actionSeq: 12, payload: try state(12))
            fake.publish(try increase(12))
            #expect(await fake.eventually { $0.snapshotRequests == 2 })
            #expect(await FakeClientAuthority.eventually { delivered.value.last?.version == 12 })
            fake.publish(try increase(13))
            #expect(await FakeClientAuthority.eventually { delivered.value.last?.version == 13 })
            #expect(delivered.value.map(\.version) == [5, 6, 7, 8, 9, 12, 13])
            #expect(delivered.value.map(\.state.count) == [5, 6, 7, 8, 9, 12, 13])
            #expect(observer.metrics.refetches == 1)
            #expect(observer.metrics.mutations == 7)
            observer.stop()
            await observer.wait()
            await reader.value
        }
    }

    /// An authority whose state is older than the one held (it lost the tail of that history,
    /// as a failover under async replication may): its state is not taken (versions never go
    /// back), and neither are its mutations on top of the state held, which would make states no
    /// authority had; once its versions pass the one held, its state is fetched and followed.
    @Test func aStateOlderThanTheOneHeldStopsFollowingUntilANewerOneIsFetched() async throws {
        try await FakeClientAuthority.with { context, fake in
            fake.setSnapshot(version: 5, actionSeq: 5, payload: try state(5))
            let configuration = ObserverConfiguration(feedEndpoint: fake.feedEndpoint, actionsEndpoint: fake.actionsEndpoint, silenceTimeout: .milliseconds(300))
            let observer = try Observer<Counter>(reactor: Counter(), configuration: configuration, logger: quietLogger, context: context)
            let delivered = Box<[Snapshot<Counter.State>]>([])
            let stream = observer.snapshots()
            let reader = Task { for await snapshot in stream { delivered.value.append(snapshot) } }
            try observer.start()
            #expect(await fake.eventually { Set(["mutation", "heartbeat"]).isSubset(of: Set($0.subscriptions)) })
            for version: UInt64 in 6...9 { fake.publish(try increase(version)) }
            #expect(await FakeClientAuthority.eventually { delivered.value.last?.version == 9 })

            // The feed falls silent; the state fetched again is of another history, at 7.
            fake.setSnapshot(version: 7, actionSeq: 7, payload: try state(100))
            #expect(await fake.eventually { $0.snapshotRequests >= 2 })
            #expect(await FakeClientAuthority.eventually { observer.metrics.staleIgnored >= 1 })
            let requests = fake.recorded.snapshotRequests
            // Its mutations up to the version held are not the held state's; the next one past it
            // makes the observer fetch the state again.
            fake.setSnapshot(version: 10, actionSeq: 10, payload: try state(103))
            for version: UInt64 in 8...10 { fake.publish(try increase(version)) }
            #expect(await fake.eventually { $0.snapshotRequests > requests })
            #expect(await FakeClientAuthority.eventually { delivered.value.last?.version == 10 })
            fake.publish(try increase(11))
            #expect(await FakeClientAuthority.eventually { delivered.value.last?.version == 11 })
            // (Deliveries may be coalesced: 6...9 came at once.)
            #expect(delivered.value.allSatisfy { $0.version > 9 || $0.state.count == Int($0.version) })
            #expect(delivered.value.filter { $0.version > 9 }.map { "\($0.version):\($0.state.count)" } == ["10:103", "11:104"],
                    "no state mixes the two histories")
            observer.stop()
            await observer.wait()
            await reader.value
        }
    }

    @Test func fetchesALargeStateInChunksWithCredit() async throws {
        try await FakeClientAuthority.with { context, fake in
            // The inventory's 10,000 items (several hundred KiB) in chunks of 4 KiB.
            let inventory = Inventory()
            let payload = try MessagePackEncoder().encode(inventory.initialState)
            fake.setSnapshot(version: 3, actionSeq: 3, payload: payload)
            var configuration = ObserverConfiguration(feedEndpoint: fake.feedEndpoint, actionsEndpoint: fake.actionsEndpoint, silenceTimeout: .seconds(60))
            configuration.maxMessageBytes = 4_096
            let observer = try Observer<Inventory>(reactor: inventory, configuration: configuration, logger: quietLogger, context: context)
            var snapshots = observer.snapshots().makeAsyncIterator()
            try observer.start()
            let first = try #require(await snapshots.next())
            #expect(first.version == 3)
            #expect(first.state == inventory.initialState)
            let chunkRequests = fake.recorded.received.filter { if case .snapshotChunk = $0 { true } else { false } }.count
            #expect(chunkRequests == (payload.count + 4_095) / 4_096)
            observer.stop()
            await observer.wait()
        }
    }
}
