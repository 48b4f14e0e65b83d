import Foundation
import Testing
import TestSupport
import TestTraits

/// `--metrics` on the real binaries: a real Prometheus text parser reads exact counters after a
/// known workload, and misbehaving HTTP clients on the metrics port do not disturb the authority.
@Suite(.spawnsProcesses) struct MetricsEndpointTests {
    static let countUp = #"{"countUp":{}}"#
    static let countUpAsync = #"{"countUpAsync":{}}"#

    /// Whether `python3` imports prometheus_client (scripts/ensure-deps.sh --python): actually
    /// tried, so the test is skipped only when the parser could not run at all.
    static let pythonHasPrometheusClient = Python.imports("prometheus_client.parser")

    /// Fetches a /metrics page and parses it with prometheus_client's own parser; prints one JSON
    /// line: the families' types, and every sample as `name{sorted labels}` to its value.
    static let parser = """
        import json, sys, urllib.request
        from prometheus_client.parser import text_string_to_metric_families
        with urllib.request.urlopen(sys.argv[1], timeout=10) as response:
            content_type = response.headers["Content-Type"]
            text = response.read().decode("utf-8")
        types, samples = {}, {}
        for family in text_string_to_metric_families(text):
            types[family.name] = family.type
            for sample in family.samples:
                key = sample.name + "{" + ",".join('%s="%s"' % item for item in sorted(sample.labels.items())) + "}"
                if key in samples:
                    raise SystemExit("duplicate series " + key)
                samples[key] = sample.value
        print(json.dumps({"content_type": content_type, "types": types, "samples": samples}))
        """

    struct Scrape {
        var contentType: String
        var types: [String: String]
        var samples: [String: Double]

        /// A sample's value by name and labels (written in any order).
        func value(_ name: String, _ labels: [String: String]) -> Double? {
            samples[name + "{" + labels.sorted { $0.key < $1.key }.map { "\($0.key)=\"\($0.value)\"" }.joined(separator: ",") + "}"]
        }
    }

    func scrape(_ address: String) async throws -> Scrape {
        let python = try ChildProcess.program(executable: "/usr/bin/env", arguments: ["python3", "-c", Self.parser, "http://\(address)/metrics"], name: "prometheus-parser")
        let status = await python.waitForExit(timeout: .seconds(30))
        #expect(status == 0, "\(python.diagnostics)")
        let line = try #require(python.output.last, "the parser printed nothing\(python.diagnostics)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        return Scrape(contentType: try #require(object["content_type"] as? String),
                      types: try #require(object["types"] as? [String: String]),
                      samples: try #require(object["samples"] as? [String: Double]))
    }

    /// The `metrics` address in the first JSON line a node printed.
    func metricsAddress(_ node: ChildProcess) async throws -> String {
        let line = try #require(await node.waitForLine { $0.contains("\"metrics\"") }, "no metrics address printed\(node.diagnostics)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        return try #require(object["metrics"])
    }

    @Test(.enabled(if: pythonHasPrometheusClient, "python3 with prometheus_client (scripts/ensure-deps.sh --python)"))
    func aPrometheusParserReadsExactCountersAfterAKnownWorkload() async throws {
        let cluster = try await ClusterProcesses(extra: ["--metrics", "127.0.0.1:0"])
        let authorityAddress = try await metricsAddress(cluster.authority)
        let worker = try cluster.addWorker(["--metrics", "127.0.0.1:0", "--name", "w1"])
        let workerAddress = try await metricsAddress(worker)
        try await cluster.waitForWorkers(1)
        let observer = try ChildProcess.node(["observe", "--app", "counter", "--feed", cluster.endpoints.feed, "--actions", cluster.endpoints.actions, "--json"], name: "observer")
        #expect(await observer.waitForLine { $0.contains("\"version\"") } != nil, "\(observer.diagnostics)")

        let sent = try await cluster.send([Self.countUp, Self.countUpAsync], repeat: 25)
        #expect(sent.status == 0, "\(sent.process.diagnostics)")
        let probe = WireProbe(actions: cluster.endpoints.actions)
        let stats = try await probe.stats(within: .seconds(30)) { $0["actions_applied"] == 50 && $0["observers"] == 1 }
        #expect(stats["actions_applied"] == 50)

        let authority = try await scrape(authorityAddress)
        #expect(authority.contentType == "text/plain; version=0.0.4; charset=utf-8")
        let node = ["app": "counter", "node": "authority"]
        let exact: [(String, [String: String], Double)] = [
            ("reactorbus_actions_accepted_total", node, 50),
            ("reactorbus_actions_applied_total", node, 50),
            ("reactorbus_actions_duplicate_total", node, 0),
            ("reactorbus_acks_total", node, 50),
            ("reactorbus_actions_refused_total", node.merging(["reason": "busy"]) { $1 }, 0),
            ("reactorbus_mutations_applied_total", node.merging(["origin": "sync"]) { $1 }, 25),
            ("reactorbus_mutations_applied_total", node.merging(["origin": "async"]) { $1 }, 25),
            ("reactorbus_mutations_applied_total", node.merging(["origin": "failure"]) { $1 }, 0),
            ("reactorbus_jobs_dispatched_total", node, 25),
            ("reactorbus_jobs_done_total", node, 25),
            ("reactorbus_jobs_failed_total", node, 0),
            ("reactorbus_jobs_timed_out_total", node, 0),
            ("reactorbus_messages_refused_total", node.merging(["reason": "malformed"]) { $1 }, 0),
            ("reactorbus_workers_registered_total", node, 1),
            ("reactorbus_state_version", node, 50),
            ("reactorbus_action_seq", node, 50),
            ("reactorbus_open_jobs", node, 0),
            ("reactorbus_queued_jobs", node, 0),
            ("reactorbus_workers", node, 1),
            ("reactorbus_observers", node, 1),
            ("reactorbus_clients", node, 1),
            ("reactorbus_journal_commits_total", node, 0),
            ("reactorbus_ack_latency_seconds_count", node, 50),
            ("reactorbus_ack_latency_seconds_bucket", node.merging(["le": "+Inf"]) { $1 }, 50),
        ]
        for (name, labels, value) in exact {
            #expect(authority.value(name, labels) == value, "\(name)\(labels)")
        }
        #expect(authority.types["reactorbus_actions_applied"] == "counter")
        #expect(authority.types["reactorbus_state_version"] == "gauge")
        #expect(authority.types["reactorbus_ack_latency_seconds"] == "histogram")
        #expect((authority.value("reactorbus_socket_received_bytes_total", node.merging(["socket": "actions"]) { $1 }) ?? 0) > 0)
        #expect((authority.value("reactorbus_socket_sent_bytes_total", node.merging(["socket": "workers"]) { $1 }) ?? 0) > 0)

        let worked = try await scrape(workerAddress)
        let workerNode = ["app": "counter", "node": "w1"]
        for (name, value) in [("reactorbus_worker_jobs_received_total", 25.0), ("reactorbus_worker_jobs_done_total", 25), ("reactorbus_worker_jobs_failed_total", 0),
                              ("reactorbus_worker_mutations_emitted_total", 25), ("reactorbus_worker_registrations_total", 1), ("reactorbus_worker_registered", 1),
                              ("reactorbus_worker_running_effects", 0), ("reactorbus_worker_effect_duration_seconds_count", 25),
                              ("reactorbus_worker_effects_on_loop_thread", 1)] {
            #expect(worked.value(name, workerNode) == value, "\(name)")
        }
        #expect(worked.types["reactorbus_worker_effect_duration_seconds"] == "histogram")
        // A one-mutation job is an emit and a done, or one done carrying it, as the batches fall.
        #expect(worked.types["reactorbus_worker_combined_reports"] == "counter")
        #expect((0 ... 25).contains(worked.value("reactorbus_worker_combined_reports_total", workerNode) ?? -1))

        // Every metric the shipped Grafana dashboard queries is one the nodes serve.
        let dashboard = try String(contentsOfFile: ChildProcess.packageRoot + "/deploy/grafana/reactorbus-dashboard.json", encoding: .utf8)
        let served = Set(authority.types.keys).union(worked.types.keys)
        let queried = Set(dashboard.matches(of: /reactorbus_[a-z_]+/).map { String($0.output) })
        #expect(queried.count > 30)
        let unserved = queried.filter { name in
            !served.contains(["_bucket", "_sum", "_count", "_total"].reduce(name) { $0.hasSuffix($1) ? String($0.dropLast($1.count)) : $0 })
        }
        #expect(unserved.isEmpty, "the dashboard queries metrics no node serves: \(unserved.sorted())")

        // The observer leaves: the feed's connection count goes back down.
        observer.signal(SIGTERM)
        #expect(await observer.waitForExit() == 0)
        let after = try await probe.stats(within: .seconds(10)) { $0["observers"] == 0 }
        #expect(after["observers"] == 0)
        await cluster.stop()
        #expect(cluster.authority.reap() == 0)
    }

    @Test func misbehavingHTTPClientsOnTheMetricsPortDoNotDisturbTheAuthority() async throws {
        let cluster = try await ClusterProcesses(extra: ["--metrics", "127.0.0.1:0"])
        let address = try await metricsAddress(cluster.authority)
        let port = try #require(address.split(separator: ":").last.flatMap { UInt16($0) })
        // More silent connections than the endpoint serves at once (32): the rest wait in the backlog.
        let silent = (0..<40).compactMap { _ in RawHTTPClient(port: port) }
        #expect(silent.count == 40)
        // Garbage, half a request, unknown paths, other methods, oversized headers; none read.
        let rude = ["HELLO\r\n\r\n", "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Half: ", "GET /admin HTTP/1.1\r\n\r\n",
                    "POST /metrics HTTP/1.1\r\nContent-Length: 1000000\r\n\r\nabc", "DELETE /metrics HTTP/1.1\r\n\r\n",
                    "GET /metrics HTTP/1.1\r\nX-Big: " + String(repeating: "z", count: 100_000) + "\r\n\r\n"]
        let rudeClients = rude.compactMap { request -> RawHTTPClient? in
            let client = RawHTTPClient(port: port)
            client?.send(request)
            return client
        }
        #expect(rudeClients.count == rude.count)

        // The authority keeps acking at once: 500 actions within the deadline, counted exactly.
        let start = ContinuousClock.now
        let sent = try await cluster.send([Self.countUp], repeat: 500)
        #expect(sent.status == 0, "\(sent.process.diagnostics)")
        #expect(ContinuousClock.now - start < .seconds(20))
        let stats = try await cluster.stats()
        #expect(stats["actions_accepted"] == 500)
        #expect(stats["acks"] == 500)
        #expect(stats["version"] == 500)
        #expect(stats["malformed"] == 0)

        // Once the silent ones time out (5 s idle), the endpoint answers again, with the same counts.
        let deadline = ContinuousClock.now + .seconds(30)
        var answer: HTTPAnswer?
        while ContinuousClock.now < deadline {
            answer = RawHTTPClient.exchange(port: port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", timeoutMilliseconds: 10_000)
            if answer?.status == 200 { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(answer?.status == 200)
        #expect(answer?.body.contains("reactorbus_acks_total{app=\"counter\",node=\"authority\"} 500\n") == true, "\(answer?.raw.prefix(300) ?? "no answer")")
        #expect(RawHTTPClient.exchange(port: port, "GET /nowhere HTTP/1.0\r\n\r\n")?.status == 404)
        #expect(RawHTTPClient.exchange(port: port, "PUT /metrics HTTP/1.0\r\n\r\n")?.status == 405)
        withExtendedLifetime(silent) {}
        withExtendedLifetime(rudeClients) {}
        await cluster.stop()
        #expect(cluster.authority.reap() == 0, "\(cluster.authority.diagnostics)")
    }

    @Test func runServesTheAuthorityAndEveryWorkerOnOneEndpoint() async throws {
        let run = try ChildProcess.node(["run", "--app", "counter", "--workers", "2", "--metrics", "127.0.0.1:0"], name: "run")
        let address = try await metricsAddress(run)
        let endpoints = try await run.endpoints()
        _ = try await WireProbe(actions: endpoints.actions).stats(within: .seconds(15)) { $0["workers"] ?? 0 >= 2 }
        let send = try ChildProcess.node(["send", "--app", "counter", "--actions", endpoints.actions, "--repeat", "4", Self.countUpAsync], name: "send")
        #expect(await send.waitForExit(timeout: .seconds(60)) == 0, "\(send.diagnostics)")
        _ = try await WireProbe(actions: endpoints.actions).stats(within: .seconds(15)) { $0["actions_applied"] == 4 }
        let port = try #require(address.split(separator: ":").last.flatMap { UInt16($0) })
        let answer = try #require(RawHTTPClient.exchange(port: port, "GET /metrics HTTP/1.0\r\n\r\n"))
        #expect(answer.status == 200)
        let lines = answer.body.split(separator: "\n").map(String.init)
        #expect(lines.contains(#"reactorbus_actions_applied_total{app="counter",node="authority"} 4"#), "\(answer.body.prefix(400))")
        // One family, one HELP and TYPE, a series per worker; together they ran every job.
        #expect(lines.filter { $0 == "# TYPE reactorbus_worker_jobs_done_total counter" }.count == 1)
        let done = lines.filter { $0.hasPrefix("reactorbus_worker_jobs_done_total{") }
        #expect(done.count == 2)
        #expect(done.allSatisfy { $0.contains(#"node="worker-1""#) || $0.contains(#"node="worker-2""#) }, "\(done)")
        #expect(done.compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }.reduce(0, +) == 4, "\(done)")
        run.signal(SIGTERM)
        #expect(await run.waitForExit(timeout: .seconds(15)) == 0, "\(run.diagnostics)")
        #expect(RawHTTPClient(port: port) == nil, "the endpoint outlived the process")
    }

    @Test func aBadMetricsAddressIsAUsageErrorAndATakenPortExits69() async throws {
        let cases: [([String], [String: String], String)] = [
            (["authority", "--app", "counter", "--metrics", "9464"], [:], "authority: --metrics '9464': expected HOST:PORT, e.g. 127.0.0.1:9464"),
            (["worker", "--app", "counter", "--metrics", "example.org:9464"], [:], "worker: --metrics 'example.org:9464': 'example.org' is not an IPv4 address"),
            (["run", "--app", "counter"], ["REACTOR_METRICS": "127.0.0.1:99999"], "run: --metrics '127.0.0.1:99999': '99999' is not a port"),
        ]
        for (arguments, environment, message) in cases {
            let node = try ChildProcess.node(arguments, environment: environment)
            #expect(await node.waitForExit(timeout: .seconds(10)) == 64, "\(arguments)")
            #expect(node.diagnostics.contains(message), "\(arguments): \(node.diagnostics)")
            #expect(node.output.isEmpty, "\(arguments) printed \(node.output)")
        }
        let holder = try await ClusterProcesses(extra: ["--metrics", "127.0.0.1:0"])
        let taken = try await metricsAddress(holder.authority)
        for command in [["authority", "--app", "counter", "--actions", "tcp://127.0.0.1:*", "--workers", "tcp://127.0.0.1:*", "--feed", "tcp://127.0.0.1:*"],
                        ["worker", "--app", "counter", "--authority", holder.endpoints.workers]] {
            let node = try ChildProcess.node(command, environment: ["REACTOR_METRICS": taken])
            #expect(await node.waitForExit(timeout: .seconds(15)) == 69, "\(command[0]): \(node.diagnostics)")
            #expect(node.diagnostics.contains("\(command[0]): cannot serve metrics: cannot listen on \(taken): bind: Address already in use"), "\(node.diagnostics)")
        }
        await holder.stop()
    }
}
