import Foundation
import HeraldClient
import HeraldCore
import HeraldHTTP
import HeraldProtocol
import HeraldServer
import HeraldStorage
import HeraldTestSupport
import HeraldTools
import Logging
import Testing

/// Attacks a hostile client made, against a running node: an installation taken over with
/// the public API key, receipts forged by another device, oversized and control-character
/// fields, and what reaches the log.
@Suite struct HostileClientTests {
    static func post(_ harness: GatewayHarness, _ path: String, headers: [(String, String)], body: String)
        async throws -> HTTPResult
    {
        try await HTTPConnection.with(host: "127.0.0.1", port: harness.httpPort) { connection in
            try await connection.request(.POST, path, headers: headers, body: Array(body.utf8))
        }
    }

    @Test func aCreateRequestNeverReplacesAnExistingInstallation() async throws {
        try await GatewayHarness.with { harness in
            let path = "/v1/projects/\(harness.project.id)/installations"
            let headers = [("x-goog-api-key", harness.project.apiKey), ("Content-Type", "application/json")]
            let victimFID = "cVictimFID0123456789AB"
            let body = #"{"fid":"\#(victimFID)","appId":"1:2:android:3","authVersion":"FIS_v2"}"#
            let victim = try JSONParser.parse(try await Self.post(harness, path, headers: headers, body: body).body)
            #expect(victim["fid"] == .string(victimFID))
            let refresh = try #require(victim["refreshToken"]?.stringValue)

            let attacker = try JSONParser.parse(try await Self.post(harness, path, headers: headers, body: body).body)
            let attackerFID = try #require(attacker["fid"]?.stringValue)
            #expect(attackerFID != victimFID)
            // The victim's installation is untouched: its refresh token still renews its auth token.
            let renewed = try await Self.post(
                harness, "\(path)/\(victimFID)/authTokens:generate",
                headers: headers + [("Authorization", "FIS_v2 \(refresh)")], body: "{}")
            #expect(renewed.status == 200)
            #expect(
                try await harness.node.store.installation(fid: victimFID, projectID: harness.project.id)?
                    .refreshToken == refresh)
        }
    }

    @Test func L7_onlyTheAddresseeCountsAReceiptAndOnlyOncePerMessageAndKind() async throws {
        try await GatewayHarness.with { harness in
            let (receiver, token) = try await harness.makeDevice()
            let (stranger, _) = try await harness.makeDevice()
            let id = try await harness.send(#"{"token":"\#(token)","notification":{"title":"t","body":"b"}}"#)
            let persistentID = try await RawMCSConnection.with(port: harness.gatewayPort, caPath: harness.caPath) {
                connection in
                _ = try #require(try await connection.login(receiver))
                return try #require(try await connection.receiveMessage()).persistentID
            }
            #expect(!persistentID.isEmpty)
            // Another device of the same project forges 300 opens of it.
            try await RawMCSConnection.with(port: harness.gatewayPort, caPath: harness.caPath) { connection in
                _ = try #require(try await connection.login(stranger))
                for _ in 0..<300 {
                    try await connection.send(MCSFrame.heraldExtension(MCSFrame.receiptExtension, "opened \(id)"))
                }
                try await Task.sleep(for: .milliseconds(200))
            }
            // The addressee opens it three times: it counts once.
            try await RawMCSConnection.with(port: harness.gatewayPort, caPath: harness.caPath) { connection in
                _ = try #require(try await connection.login(receiver, received: [persistentID]))
                for _ in 0..<3 {
                    try await connection.send(MCSFrame.heraldExtension(MCSFrame.receiptExtension, "opened \(id)"))
                }
                try await Task.sleep(for: .milliseconds(200))
            }
            let day = CalendarDay(harness.node.clock.now())
            try await GatewayHarness.eventually {
                let rows = try await harness.node.store.deliveryReport(
                    projectID: harness.project.id, appID: nil, from: day, through: day)
                return rows.reduce(0) { $0 + ($1[.opened] ?? 0) } == 1
            }
            try await Task.sleep(for: .milliseconds(600))
            let rows = try await harness.node.store.deliveryReport(
                projectID: harness.project.id, appID: nil, from: day, through: day)
            #expect(rows.reduce(0) { $0 + ($1[.opened] ?? 0) } == 1)
        }
    }

    @Test func anOversizedOrControlCharacterAppIsRefusedAndStoresNothing() async throws {
        try await GatewayHarness.with { harness in
            let device = Device.make(at: harness.node.clock.now())
            try await harness.node.store.createDevice(device)
            let sender = String(harness.project.number)
            for app in [
                String(repeating: "a", count: 100_000), "com.example\n2026-11-26 critical: forged",
                "com.example\u{1B}[31mred", "com example",
            ] {
                let answer = try await harness.register3(device, [("app", app), ("sender", sender)])
                #expect(answer.status == 400)
                #expect(answer.line == "Error=INVALID_PARAMETERS")
            }
            #expect(try await harness.node.store.registrations(androidID: device.androidID).isEmpty)
        }
    }

    @Test func checkInsAndRegistrationsPerAddressAndPerDeviceAreBounded() async throws {
        var limits = DeviceRequestLimiter.Limits()
        limits.checkinsPerAddress = 3
        limits.registrationsPerDevice = 2
        try await GatewayHarness.with(deviceRequestLimits: limits) { harness in
            let registrar = try DeviceRegistrar(server: harness.server)
            var devices: [(UInt64, UInt64)] = []
            for _ in 0..<3 { devices.append(try await registrar.checkin(existing: nil)) }
            await #expect(throws: DeviceRegistrar.Failure.self) { _ = try await registrar.checkin(existing: nil) }
            // A device that checks in again with its credentials is not a new one.
            #expect(try await registrar.checkin(existing: devices[0]) == devices[0])

            let (androidID, securityToken) = devices[0]
            let device = try #require(try await harness.node.store.device(androidID: androidID))
            #expect(device.securityToken == securityToken)
            let form = [("app", "com.example.limited"), ("sender", String(harness.project.number))]
            for _ in 0..<2 {
                #expect(try await harness.register3(device, form).status == 200)
            }
            let refused = try await harness.register3(device, form)
            #expect(refused.status == 429)
            #expect(refused.line == "Error=TOO_MANY_REGISTRATIONS")
            // The same request again answers the token it has: one registration.
            #expect(try await harness.node.store.registrations(androidID: androidID).count == 1)
        }
        let limiter = DeviceRequestLimiter(limits: limits, clock: ManualClock())
        #expect(limiter.admit(.deviceRegistration, "1") && limiter.admit(.deviceRegistration, "1"))
        #expect(!limiter.admit(.deviceRegistration, "1"))
        #expect(limiter.admit(.deviceRegistration, "2"))
    }

    @Test func aLoggedValueCannotForgeALineOrDriveATerminal() {
        #expect(
            EscapingLogHandler.escaped("com.example\n2026 critical: forged") == #"com.example\n2026 critical: forged"#)
        #expect(EscapingLogHandler.escaped("a\u{1B}[31mred\r") == #"a\u{1B}[31mred\r"#)
        #expect(EscapingLogHandler.escaped(String(repeating: "x", count: 500), limit: 200).count == 201)
        // Marks and overrides that reorder what a terminal shows are written as escapes too.
        #expect(EscapingLogHandler.escaped("user\u{202E}gpj.exe") == #"user\u{202E}gpj.exe"#)
        #expect(EscapingLogHandler.escaped("a\u{2066}b\u{200F}c") == #"a\u{2066}b\u{200F}c"#)

        let lines = LogLines()
        var logger = Logger(label: "hostile") { _ in EscapingLogHandler(wrapping: CapturingLogHandler(lines: lines)) }
        logger.logLevel = .debug
        // The logger's own metadata (as the HTTP server sets per request) is escaped too.
        logger[metadataKey: "request"] = "r\nforged"
        logger.info("registered", metadata: ["app": "x\ncritical: forged\u{1B}[0m"])
        let logged = lines.all.joined()
        #expect(!logged.contains("\n"))
        #expect(!logged.contains("\u{1B}"))
        #expect(logged.contains(#"x\ncritical: forged\u{1B}[0m"#))
        #expect(logged.contains(#"r\nforged"#))
    }
}

/// Lines a `CapturingLogHandler` wrote.
final class LogLines: @unchecked Sendable {
    // Written and read by one test at a time.
    var all: [String] = []
}

/// A log handler that keeps each line it is given: message and metadata values as written.
struct CapturingLogHandler: LogHandler {
    let lines: LogLines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    var metadataProvider: Logger.MetadataProvider?

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let values = (event.metadata ?? [:]).map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")
        lines.all.append("\(event.message) \(values)")
    }
}
