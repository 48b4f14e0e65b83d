import Testing
@testable import MessagePack

@Test func MessagePackModuleLoads() {
    #expect(1 + 1 == 2)
}
