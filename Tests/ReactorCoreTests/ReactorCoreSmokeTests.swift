import Testing
@testable import ReactorCore

@Test func ReactorCoreModuleLoads() {
    #expect(1 + 1 == 2)
}
