import Testing
import ZeroMQ

@Suite struct ZMQTests {
    @Test func versionIsTheLinkedLibzmq() {
        let version = ZMQ.version
        #expect(version >= ZMQ.Version(major: 4, minor: 3, patch: 0))
        #expect(version.description == "\(version.major).\(version.minor).\(version.patch)")
        #expect(ZMQ.Version(major: 4, minor: 3, patch: 4) < ZMQ.Version(major: 4, minor: 10, patch: 0))
    }
}
