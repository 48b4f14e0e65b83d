import Testing
@testable import ArgumentParsing

@Test func ArgumentParsingModuleLoads() {
    #expect(1 + 1 == 2)
}
