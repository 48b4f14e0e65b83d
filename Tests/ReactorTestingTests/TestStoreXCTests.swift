import ReactorApps
import ReactorTesting
import Synchronization
import XCTest

/// The test store under XCTest: failures go to `XCTFail` (captured here through the test
/// case's failure hook, so that the expected ones do not fail the run).
final class TestStoreXCTests: XCTestCase {
    /// Failures recorded while capturing; `nil` when not capturing.
    private let captured = Mutex<[String]?>(nil)

    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
        let taken = captured.withLock { list -> Bool in
            guard list != nil else { return false }
            list?.append(description)
            return true
        }
        if !taken { super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected) }
    }

    func testCorrectExpectationsPass() async {
        let store = TestStore(reactor: Counter())
        store.send(.countUp) { $0.count = 1 }
        store.send(.countUpAsync)
        await store.runEffects(with: CounterEffects())
        store.receive(.increase) { $0.count = 2 }
        store.finish()
    }

    func testAWrongStateClosureFailsThroughXCTest() {
        let store = TestStore(reactor: Counter())
        captured.withLock { $0 = [] }
        store.send(.countUp) { $0.count = 5 }
        store.send(.countUpAsync)
        store.finish()
        let failures = captured.withLock { list in
            defer { list = nil }
            return list ?? []
        }
        XCTAssertEqual(failures.count, 2)
        XCTAssertTrue(failures.first?.hasSuffix("""
            State after sending countUp differs from the expectation (− expected, + actual):
              ▿ ReactorApps.Counter.State
            −   - count: 5
            +   - count: 1
            """) == true, "\(failures)")
        XCTAssertTrue(failures.last?.hasSuffix("1 effect requested but neither stubbed nor run:\n  slowIncrease") == true, "\(failures)")
    }
}
