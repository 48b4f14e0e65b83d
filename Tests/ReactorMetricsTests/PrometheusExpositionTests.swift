import ReactorMetrics
import Testing

@Suite struct PrometheusExpositionTests {
    let labels: MetricLabels = ["app": "counter", "node": "authority"]

    @Test func countersAndGaugesAreWrittenWithHelpTypeAndLabels() {
        let text = PrometheusExposition.text([
            .counter("reactorbus_actions_accepted_total", "Actions accepted.", labels: labels, 42),
            .gauge("reactorbus_queued_jobs", "Jobs waiting for a worker.", labels: labels, 3),
            .gauge("reactorbus_ratio", "A fraction.", labels: [:], 0.25),
        ])
        #expect(text == """
            # HELP reactorbus_actions_accepted_total Actions accepted.
            # TYPE reactorbus_actions_accepted_total counter
            reactorbus_actions_accepted_total{app="counter",node="authority"} 42
            # HELP reactorbus_queued_jobs Jobs waiting for a worker.
            # TYPE reactorbus_queued_jobs gauge
            reactorbus_queued_jobs{app="counter",node="authority"} 3
            # HELP reactorbus_ratio A fraction.
            # TYPE reactorbus_ratio gauge
            reactorbus_ratio 0.25

            """)
    }

    @Test func histogramsAreCumulativeBucketsThenSumAndCount() {
        var histogram = Histogram(bounds: [0.00005, 0.5, 2])
        for value in [0.00001, 0.25, 0.25, 7] { histogram.observe(value) }
        let text = PrometheusExposition.text([.histogram("reactorbus_ack_latency_seconds", "Ack latency.", labels: labels, histogram)])
        #expect(text == """
            # HELP reactorbus_ack_latency_seconds Ack latency.
            # TYPE reactorbus_ack_latency_seconds histogram
            reactorbus_ack_latency_seconds_bucket{app="counter",node="authority",le="5e-05"} 1
            reactorbus_ack_latency_seconds_bucket{app="counter",node="authority",le="0.5"} 3
            reactorbus_ack_latency_seconds_bucket{app="counter",node="authority",le="2"} 3
            reactorbus_ack_latency_seconds_bucket{app="counter",node="authority",le="+Inf"} 4
            reactorbus_ack_latency_seconds_sum{app="counter",node="authority"} 7.50001
            reactorbus_ack_latency_seconds_count{app="counter",node="authority"} 4

            """)
    }

    @Test func familiesOfOneNameFromSeveralNodesAreWrittenOnce() {
        let text = PrometheusExposition.text([
            .counter("reactorbus_worker_jobs_done_total", "Jobs done.", labels: ["node": "worker-1"], 1),
            .gauge("reactorbus_worker_running_effects", "Effects running.", labels: ["node": "worker-1"], 0),
            .counter("reactorbus_worker_jobs_done_total", "Jobs done (ignored: the first help wins).", labels: ["node": "worker-2"], 2),
        ])
        #expect(text == """
            # HELP reactorbus_worker_jobs_done_total Jobs done.
            # TYPE reactorbus_worker_jobs_done_total counter
            reactorbus_worker_jobs_done_total{node="worker-1"} 1
            reactorbus_worker_jobs_done_total{node="worker-2"} 2
            # HELP reactorbus_worker_running_effects Effects running.
            # TYPE reactorbus_worker_running_effects gauge
            reactorbus_worker_running_effects{node="worker-1"} 0

            """)
    }

    @Test func familiesWithSeveralSamplesKeepTheirOrder() {
        let family = MetricFamily(name: "reactorbus_actions_refused_total", help: "Actions refused, by reason.", kind: .counter, samples: [
            MetricSample(labels: labels.adding("reason", "busy"), value: .number(2)),
            MetricSample(labels: labels.adding("reason", "stale"), value: .number(0)),
        ])
        #expect(PrometheusExposition.text([family]) == """
            # HELP reactorbus_actions_refused_total Actions refused, by reason.
            # TYPE reactorbus_actions_refused_total counter
            reactorbus_actions_refused_total{app="counter",node="authority",reason="busy"} 2
            reactorbus_actions_refused_total{app="counter",node="authority",reason="stale"} 0

            """)
    }

    @Test func helpAndLabelValuesAreEscaped() {
        let text = PrometheusExposition.text([
            .gauge("x", "a \\ b\nc \"quoted\"", labels: ["node": "we\\ird \"name\"\r\nnext"], 1),
        ])
        #expect(text == """
            # HELP x a \\\\ b\\nc "quoted"
            # TYPE x gauge
            x{node="we\\\\ird \\"name\\"\r\\nnext"} 1

            """)
    }

    @Test func numbersAreWrittenExactlyAndSpecialValuesByName() {
        let values: [(Double, String)] = [
            (0, "0"), (3, "3"), (18_446_744_073_709, "18446744073709"), (1e20, "1e+20"), (0.1, "0.1"),
            (5e-05, "5e-05"), (-2.5, "-2.5"), (.infinity, "+Inf"), (-.infinity, "-Inf"), (.nan, "NaN"),
        ]
        for (value, expected) in values {
            #expect(PrometheusExposition.text([.gauge("g", "h", labels: [:], value)]).hasSuffix("g \(expected)\n"), "\(value)")
        }
    }

    @Test func nothingToWriteIsTheEmptyText() {
        #expect(PrometheusExposition.text([]) == "")
    }
}
