import HeraldGateway
import NIOCore
import NIOEmbedded
import Testing

/// Connections not yet authenticated are bounded per source address and in all, and stop
/// counting once they authenticate or close.
@Suite struct ConnectionAdmissionTests {
    @Test func aSourceAddressGetsItsShareAndTheTotalKeepsTheRest() {
        let admission = ConnectionAdmission(limits: .init(perAddress: 2, total: 3))
        #expect(admission.admit("10.0.0.1") == nil)
        #expect(admission.admit("10.0.0.1") == nil)
        #expect(admission.admit("10.0.0.1") == .perAddress)
        #expect(admission.admit("10.0.0.2") == nil)
        #expect(admission.admit("10.0.0.3") == .total)
        admission.release("10.0.0.1")
        #expect(admission.admit("10.0.0.3") == nil)
        #expect(admission.counted(from: "10.0.0.1") == (total: 3, address: 1))
        let unlimited = ConnectionAdmission(limits: .init(perAddress: 0, total: 0))
        for _ in 0..<10_000 { #expect(unlimited.admit("10.0.0.1") == nil) }
    }

    @Test func aConnectionPastTheBoundIsClosedAndOneThatAuthenticatesGivesItsPlaceBack() throws {
        let admission = ConnectionAdmission(limits: .init(perAddress: 1, total: 10))
        let address = try SocketAddress(ipAddress: "10.0.0.9", port: 4000)
        let first = EmbeddedChannel(handler: admission.makeHandler())
        try first.connect(to: address).wait()
        #expect(first.isActive)
        let second = EmbeddedChannel(handler: admission.makeHandler())
        try second.connect(to: address).wait()
        #expect(!second.isActive)  // closed at once
        first.pipeline.triggerUserOutboundEvent(ConnectionAdmission.Authenticated(), promise: nil)
        #expect(admission.counted(from: "10.0.0.9").address == 0)
        let third = EmbeddedChannel(handler: admission.makeHandler())
        try third.connect(to: address).wait()
        #expect(third.isActive)
        _ = try third.finish()
        #expect(admission.counted(from: "10.0.0.9").address == 0)
        _ = try first.finish()
    }

    /// 2,200 logged-in device sessions from one address were all held: one host could
    /// take every descriptor with devices that check in for free.
    @Test func anAddressHoldsAtMostItsAuthenticatedConnectionsAndAClosedOneFreesItsPlace() throws {
        let admission = ConnectionAdmission(limits: .init(perAddress: 10, total: 10, authenticatedPerAddress: 2))
        let address = try SocketAddress(ipAddress: "10.0.0.7", port: 4000)
        func loggedIn() throws -> EmbeddedChannel {
            let channel = EmbeddedChannel(handler: admission.makeHandler())
            try channel.connect(to: address).wait()
            channel.pipeline.triggerUserOutboundEvent(ConnectionAdmission.Authenticated(), promise: nil)
            return channel
        }
        let first = try loggedIn()
        let second = try loggedIn()
        let third = try loggedIn()
        #expect(first.isActive && second.isActive)
        #expect(!third.isActive)  // closed as it authenticated
        #expect(admission.authenticated("10.0.0.8") == nil)  // another address is not held back
        _ = try first.finish()
        let fourth = try loggedIn()
        #expect(fourth.isActive)
        #expect(admission.counted(from: "10.0.0.7").address == 0)
        _ = try second.finish()
        _ = try fourth.finish()
    }
}
