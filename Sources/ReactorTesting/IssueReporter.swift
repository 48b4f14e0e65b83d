import Testing

#if canImport(XCTest)
import XCTest
#endif

/// Reports a failed expectation to the test library that runs the current test.
///
/// swift-testing's `Issue.record` only counts inside a swift-testing test (`Test.current` is set,
/// task-locally, for the test's whole body, deinitialisers of its values included), so it is
/// used there; anywhere else the failure goes to XCTest's `XCTFail`, which is what an
/// `XCTestCase` sees.
enum IssueReporter {
    static func report(_ message: String, at site: SourceSite) {
        if Test.current != nil {
            Issue.record(
                Comment(rawValue: message),
                sourceLocation: SourceLocation(
                    fileID: String(describing: site.fileID),
                    filePath: String(describing: site.filePath),
                    line: Int(site.line),
                    column: Int(site.column)
                )
            )
            return
        }
        #if canImport(XCTest)
        XCTFail(message, file: site.filePath, line: site.line)
        #else
        print("\(site.fileID):\(site.line): \(message)")
        #endif
    }
}
