# Everything starts here. Each target installs the system packages it needs.
SHELL := /bin/bash
SWIFT ?= swift

.PHONY: all deps build release test test-swift demo bench clean bench-codec fuzz fuzz-long

all: build

deps:
	@scripts/ensure-deps.sh --python

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

## Packages that depend on this one by path (the acceptance tests' user packages, the guide's
## package, examples/OrderFulfilment) build in this one scratch directory, so that this
## package's modules are compiled for them once, not once each.
DEPENDENTS := $(CURDIR)/.build/dependents

## The whole test suite: unit and multi-process tests (one at a time: several tests start
## real processes and 2 cores are shared), the example app's tests, then the docker-compose
## integration tests (the single-authority deployment, then the elected one with etcd and a
## primary killed under load), then a bounded libFuzzer run of both harnesses (about 3 minutes
## with their build; docs/FUZZING.md).
test: test-swift
	scripts/compose-test.sh
	scripts/compose-ha-test.sh
	scripts/fuzz.sh 60

## Only the Swift tests (no Docker): this package's, then examples/OrderFulfilment's. They also
## need Chromium, its driver and Selenium (the inspector's page is tested in a real browser).
test-swift: deps
	@scripts/ensure-deps.sh --python --browser
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --no-parallel
	$(SWIFT) build --build-tests --package-path examples/OrderFulfilment --scratch-path $(DEPENDENTS)
	$(SWIFT) test --skip-build --package-path examples/OrderFulfilment --scratch-path $(DEPENDENTS)

## The main job: an embedded, all-in-one demo.
demo: release
	$(SWIFT) run -c release --skip-build reactor-node demo

## libFuzzer on the MessagePack decoder and the authority's message handling, 60 s per target.
fuzz: deps
	scripts/fuzz.sh 60

## The same, 10 minutes per target.
fuzz-long: deps
	scripts/fuzz.sh 600

## The benchmark: every role in its own process on loopback, against raw libzmq and a Python
## authority (about a minute; BENCH_ARGS=--quick for about 20 seconds, BENCH_ARGS=--json for JSON),
## and writes the report as a page with charts to .build/bench-report.html.
## (Its own executable: reactor-bench starts the reactor-node built next to it.)
bench: deps
	$(SWIFT) build -c release --product reactor-node
	$(SWIFT) build -c release --product reactor-bench
	$(SWIFT) run -c release --skip-build reactor-bench --html .build/bench-report.html $(BENCH_ARGS)

## Codec throughput: Codable MessagePack vs hand-written msgpack-c.
bench-codec: deps
	$(SWIFT) run -c release msgpack-bench

clean:
	rm -rf .build

.PHONY: images compose-test compose-ha-test

## Container images, built here without any registry (docs/DEPLOYMENT.md).
images: deps
	scripts/docker/build-images.sh

## The compose deployment's integration test; installs and starts Docker when needed.
compose-test: deps
	scripts/compose-test.sh

## The elected deployment's integration test (docker-compose.ha.yml: etcd, three authorities).
compose-ha-test: deps
	scripts/compose-ha-test.sh
