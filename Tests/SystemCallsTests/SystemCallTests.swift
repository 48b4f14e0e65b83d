import Glibc
import SystemCalls
import Testing

@Suite struct SystemCallTests {
    @Test func interruptedCallsRunAgainUntilTheyAnswer() {
        var runs = 0
        let result = retryingInterrupts("fake") { () -> Int32 in
            runs += 1
            guard runs == 3 else {
                errno = EINTR
                return -1
            }
            return 7
        }
        #expect(result == .success(7))
        #expect(runs == 3)
    }

    @Test func otherFailuresComeBackOnceWithTheirErrnoAndCallName() {
        var runs = 0
        let result = retryingInterrupts("close") { () -> Int32 in
            runs += 1
            return close(-1)
        }
        #expect(result == .failure(SystemCallError(code: EBADF, function: "close")))
        #expect(runs == 1)
        if case .failure(let error) = result {
            #expect(error.description == "close: Bad file descriptor (errno \(EBADF))")
        }
    }

    @Test func zeroIsSuccess() {
        #expect(retryingInterrupts("fake") { Int32(0) } == .success(0))
    }
}
