import Testing
@testable import ReactorBus

@Test func ReactorBusModuleLoads() {
    #expect(1 + 1 == 2)
}
