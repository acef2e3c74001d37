import Foundation
import HeraldClient
import HeraldCore
import HeraldProtocol
import HeraldTestSupport
import Testing

@testable import HeraldGateway

/// The gateway's handling of connections: logins, protocol errors, many devices at once.
@Suite(.serialized) struct GatewayConnectionTests {
    @Test func aLoginWithAWrongSecurityTokenIsRefusedAndClosed() async throws {
        try await GatewayHarness.with { harness in
            let (device, _) = try await harness.makeDevice()
            try await RawMCSConnection.with(port: harness.gatewayPort, caPath: harness.caPath) { connection in
                let response = try #require(
                    try await connection.login(device, securityToken: device.securityToken &+ 1))
                #expect(response.hasError)
                #expect(response.error.code == 401)
                #expect(try await connection.receive() == nil)
            }
            #expect(!harness.node.devices.isConnected(androidID: device.androidID))
        }
    }

    @Test func theClientSDKStopsWhenItsLoginIsRefused() async throws {
        try await GatewayHarness.with { harness in
            let identity = harness.directory + "/bad.json"
            let client = HeraldClient(configuration: harness.clientConfiguration(identity: identity))
            _ = try await client.register()
            var saved = try #require(try DeviceIdentity.load(from: identity))
            saved.securityToken &+= 1
            try saved.save(to: identity)
            let refused = HeraldClient(configuration: harness.clientConfiguration(identity: identity))
            await #expect(throws: HeraldClient.Failure.self) { try await refused.run() }
        }
    }

    @Test func malformedFramesGetAStreamErrorAndACloseWhileOtherConnectionsCarryOn() async throws {
        try await GatewayHarness.with { harness in
            let good = HeraldClient(configuration: harness.clientConfiguration())
            let token = try await good.register()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await good.run() }
                try await GatewayHarness.eventually { await good.isConnected }
                let (device, _) = try await harness.makeDevice()
                for garbage: [UInt8] in [[99, 1, 0], [7, 3, 0xFF, 0xFF, 0xFF], [8, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]] {
                    try await RawMCSConnection.with(port: harness.gatewayPort, caPath: harness.caPath) { connection in
                        _ = try #require(try await connection.login(device))
                        try await connection.sendBytes(garbage)
                        let frame = try #require(try await connection.receive())
                        #expect(frame.tag == .streamErrorStanza)
                        #expect(try await connection.receive() == nil)
                    }
                }
                // A first frame that is not a login is refused the same way.
                try await RawMCSConnection.with(port: harness.gatewayPort, caPath: harness.caPath) { connection in
                    try await connection.send(MCSFrame(tag: .heartbeatPing, payload: []))
                    #expect(try await connection.receive()?.tag == .streamErrorStanza)
                }
                let id = try await harness.send(#"{"token":"\#(token)","data":{"still":"fine"}}"#)
                guard case .message(let message) = try await firstEvent(good) else {
                    Issue.record("expected a message")
                    return
                }
                #expect(message.messageID == id)
                group.cancelAll()
            }
        }
    }

    @Test func N2_theServerAnswersHeartbeatsAndPingsIdleDevices() async throws {
        try await GatewayHarness.with(heartbeatSeconds: 5) { harness in
            let (device, _) = try await harness.makeDevice()
            try await RawMCSConnection.with(port: harness.gatewayPort, caPath: harness.caPath) { connection in
                let response = try #require(try await connection.login(device))
                #expect(response.heartbeatConfig.intervalMs == 5000)
                try await connection.send(MCSFrame(tag: .heartbeatPing, payload: []))
                #expect(try await connection.receive()?.tag == .heartbeatAck)
                // Idle: the server pings within its interval.
                #expect(try await connection.receive()?.tag == .heartbeatPing)
            }
        }
    }

    /// N2 across many connections: the clock tick reaches sessions in batches per event
    /// loop, so with three batches' worth of idle devices every one of them is pinged
    /// on the next tick. Each connection stays open until all are pinged: one that closed would
    /// leave the table and let a session missed by the tick into an earlier batch.
    @Test func N2_everyIdleConnectionIsPingedWhenTheTickGoesOutInBatches() async throws {
        let clock = ManualClock()
        try await GatewayHarness.with(heartbeatSeconds: 5, clock: clock) { harness in
            let count = ConnectionTable.batchSize * 3
            var devices: [Device] = []
            for _ in 0..<count { devices.append(try await harness.makeDevice().0) }
            let ready = ReadyCounter()
            let pinged = ReadyCounter()
            let done = ReadyCounter()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for device in devices {
                    group.addTask {
                        try await RawMCSConnection.with(port: harness.gatewayPort, caPath: harness.caPath) {
                            connection in
                            guard let response = try await connection.login(device), !response.hasError else { return }
                            await ready.increment()
                            guard try await connection.receive()?.tag == .heartbeatPing else { return }
                            await pinged.increment()
                            while await done.count == 0 { try await Task.sleep(for: .milliseconds(20)) }
                        }
                    }
                }
                try await GatewayHarness.eventually(60) { await ready.count == count }
                #expect(harness.node.devices.count == count)
                clock.advance(seconds: 6)
                try? await GatewayHarness.eventually(30) { await pinged.count == count }
                #expect(await pinged.count == count)
                await done.increment()
                try await group.waitForAll()
            }
        }
    }

    @Test func aNewLoginReplacesTheOldConnection() async throws {
        try await GatewayHarness.with { harness in
            let (device, token) = try await harness.makeDevice()
            try await RawMCSConnection.with(port: harness.gatewayPort, caPath: harness.caPath) { old in
                _ = try #require(try await old.login(device))
                try await RawMCSConnection.with(port: harness.gatewayPort, caPath: harness.caPath) { new in
                    _ = try #require(try await new.login(device))
                    #expect(try await old.receive()?.tag == .close)
                    #expect(try await old.receive() == nil)
                    let id = try await harness.send(#"{"token":"\#(token)","data":{"to":"new"}}"#)
                    #expect(try await new.receiveMessage()?.persistentID == id)
                }
            }
        }
    }

    @Test func aThousandDevicesConnectAtOnceAndEachReceivesItsMessage() async throws {
        try await GatewayHarness.with { harness in
            var devices: [(Device, String)] = []
            for _ in 0..<1000 { devices.append(try await harness.makeDevice()) }
            let ready = ReadyCounter()
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for (device, token) in devices {
                    group.addTask {
                        try await RawMCSConnection.with(port: harness.gatewayPort, caPath: harness.caPath) {
                            connection in
                            guard let response = try await connection.login(device), !response.hasError else {
                                return false
                            }
                            await ready.increment()
                            guard let message = try await connection.receiveMessage() else { return false }
                            try await connection.acknowledge([message.persistentID])
                            return message.appData.contains { $0.key == "token" && $0.value == token }
                        }
                    }
                }
                try await GatewayHarness.eventually(60) { await ready.count == 1000 }
                #expect(harness.node.devices.count == 1000)
                for (_, token) in devices {
                    _ = try await harness.send(#"{"token":"\#(token)","data":{"token":"\#(token)"}}"#)
                }
                var delivered = 0
                for try await ok in group where ok { delivered += 1 }
                #expect(delivered == 1000)
            }
        }
    }
}

actor ReadyCounter {
    var count = 0
    func increment() { count += 1 }
}
