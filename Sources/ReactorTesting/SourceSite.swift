/// Where in a test a ``TestStore`` call was made: the place a failure is reported at.
///
/// Carries both forms the two test libraries want: swift-testing's `SourceLocation` takes the
/// file ID, path, line and column; XCTest's `XCTFail` takes a `StaticString` path and a line.
struct SourceSite: Sendable {
    var fileID: StaticString
    var filePath: StaticString
    var line: UInt
    var column: UInt
}
