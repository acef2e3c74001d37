public import Foundation
public import HeraldClient
public import HeraldCore
public import HeraldDelivery
public import HeraldGateway
public import HeraldHTTP
public import HeraldProtocol
public import HeraldServer
public import HeraldStorage
public import HeraldTools
public import Logging
public import NIOCore
public import NIOHTTP1
public import NIOPosix
public import NIOSSL
public import Testing

/// A whole Herald node on free loopback ports (HTTP and a TLS gateway), over a SQLite
/// store in a temporary directory, with one project whose key file the harness holds.
public struct GatewayHarness: Sendable {
    public let node: HeraldNode
    public let directory: String
    public let httpPort: Int
    public let gatewayPort: Int
    public let project: Project
    public let credentials: ServiceAccountCredentials
    public let caPath: String

    public var server: String { "http://127.0.0.1:\(httpPort)" }
    /// The drop-in listener's CA certificate, when it was asked for (`dropInPort`); its
    /// listener serves every path under `https://localhost:<port>`.
    public var dropInCAPath: String { directory + "/data/tls/drop-in-ca.pem" }

    /// A loopback port nothing listens on now.
    public static func freePort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port
        try await channel.close()
        guard let port else { throw HarnessError("no port") }
        return port
    }

    /// Starts a node, runs `body` with it, and stops the node.
    public static func with<T: Sendable>(
        heartbeatSeconds: Int = 240, clock: any HeraldClock = SystemClock(),
        settings: (@Sendable (inout ProjectSettings) -> Void)? = nil,
        acknowledgementWait: DeliveryPath.Settle? = Dispatcher.defaultAcknowledgementWait,
        deviceRequestLimits: DeviceRequestLimiter.Limits = .init(), dropInPort: Int? = nil,
        _ body: @Sendable (GatewayHarness) async throws -> T
    ) async throws -> T {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteStore(dataDirectory: directory + "/data")
        let issued = try await ProjectAdministration(store: store).createProject(
            id: "gateway-test", publicURL: "http://127.0.0.1:1", keyFileDirectory: directory)
        if let settings {
            var changed = issued.project.settings
            settings(&changed)
            _ = try await store.updateSettings(changed, projectID: issued.project.id)
        }
        var configuration = ServerConfiguration()
        configuration.dataDirectory = directory + "/data"
        configuration.httpPort = 0
        configuration.acknowledgementWait = acknowledgementWait
        configuration.deviceRequestLimits = deviceRequestLimits
        var gateway = GatewayConfiguration()
        gateway.ports = [0]
        gateway.heartbeatSeconds = heartbeatSeconds
        gateway.security = .generated(dataDirectory: directory + "/data", hostnames: ["127.0.0.1"])
        configuration.gateway = gateway
        if let dropInPort {
            configuration.dropIn = .init(host: "127.0.0.1", port: dropInPort, hostnames: ["localhost"])
        }
        var logger = Logger(label: "gateway-test")
        logger.logLevel = .critical
        let node = try await HeraldNode(configuration: configuration, store: store, clock: clock, logger: logger)
        let (ports, continuation) = AsyncStream.makeStream(of: (Int, [Int]).self)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await node.run { http, gateway in continuation.yield((http, gateway)) }
                return nil
            }
            var iterator = ports.makeAsyncIterator()
            guard let (httpPort, gatewayPorts) = await iterator.next() else { throw HarnessError("node did not start") }
            var account = try ServiceAccountCredentials(keyFile: issued.keyFilePath)
            account.tokenURI = "http://127.0.0.1:\(httpPort)/token"
            let harness = GatewayHarness(
                node: node, directory: directory, httpPort: httpPort, gatewayPort: gatewayPorts[0],
                project: issued.project, credentials: account, caPath: directory + "/data/tls/ca.pem")
            let result = try await body(harness)
            group.cancelAll()
            return result
        }!
    }

    /// A client configuration for a new device of the test project.
    public func clientConfiguration(platform: Platform = .android, identity: String? = nil)
        -> HeraldClient.Configuration
    {
        var configuration = HeraldClient.Configuration(
            server: server, projectID: project.id, apiKey: project.apiKey, appID: "com.example.test",
            platform: platform,
            gatewayHost: "127.0.0.1", gatewayPort: gatewayPort, trust: .certificateAuthority(path: caPath),
            identityPath: identity)
        configuration.initialBackoffSeconds = 0.05
        configuration.maximumBackoffSeconds = 0.5
        return configuration
    }

    /// Sends a message with the HTTP v1 API; answers the message id.
    public func send(_ message: String) async throws -> String {
        let result = try await sendRequest(message)
        guard result.status == 200, let name = (try? JSONParser.parse(result.body))?["name"]?.stringValue else {
            throw HarnessError("send failed: \(result.status) \(String(decoding: result.body, as: UTF8.self))")
        }
        return String(name.split(separator: "/").last!)
    }

    /// Sends a message and answers the raw HTTP result.
    public func sendRequest(_ message: String) async throws -> HTTPResult {
        try await get("/v1/projects/\(project.id)/messages:send", method: .POST, body: #"{"message":\#(message)}"#)
    }

    /// An authenticated request to the HTTP API, with an access token of the node's time.
    public func get(_ path: String, method: HTTPMethod = .GET, body: String = "") async throws -> HTTPResult {
        let token = try await credentials.accessToken(now: node.clock.now())
        return try await HTTPConnection.with(host: "127.0.0.1", port: httpPort) { connection in
            try await connection.request(
                method, path, headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")],
                body: Array(body.utf8))
        }
    }

    /// A device made directly in the store, with an app registration for the test project.
    public func makeDevice() async throws -> (device: Device, token: String) {
        let device = Device.make(at: node.clock.now())
        try await node.store.createDevice(device)
        let token = Registration.makeToken()
        try await node.store.createRegistration(
            Registration(
                token: token, kind: .app, projectID: project.id, sender: String(project.number),
                appID: "com.example.raw", subtype: nil, platform: .android, androidID: device.androidID,
                createdAt: node.clock.now()))
        return (device, token)
    }

    /// Waits until `condition` holds, for at most `seconds`: by default half a minute, as
    /// the whole suite starting at once can keep a test's tasks from running for tens of
    /// seconds.
    public static func eventually(
        _ seconds: Double = 30, _ condition: @Sendable () async throws -> Bool,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("condition not met in \(seconds) s", sourceLocation: sourceLocation)
        throw HarnessError("timed out")
    }
}

public struct HarnessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// The next `count` events a client's app sees, within a time limit; fewer when time runs out.
/// A connection's failure is not one: the tests that want those read `client.events`.
public func nextEvents(_ client: HeraldClient, _ count: Int, within seconds: Double = 10) async -> [ClientEvent] {
    let collected = EventBox()
    await withTaskGroup(of: Void.self) { group in
        group.addTask {
            for await event in client.events {
                if case .disconnected = event { continue }
                await collected.append(event)
                if await collected.events.count == count { return }
            }
        }
        group.addTask { try? await Task.sleep(for: .milliseconds(Int(seconds * 1000))) }
        await group.next()
        group.cancelAll()
    }
    return await collected.events
}

public actor EventBox {
    public var events: [ClientEvent] = []
    public func append(_ event: ClientEvent) { events.append(event) }
}

/// The first event a client's app sees, within a time limit.
public func firstEvent(_ client: HeraldClient, within seconds: Double = 10) async throws -> ClientEvent {
    try await withThrowingTaskGroup(of: ClientEvent?.self) { group in
        group.addTask {
            for await event in client.events {
                if case .disconnected = event { continue }
                return event
            }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            return nil
        }
        defer { group.cancelAll() }
        guard let event = try await group.next() ?? nil else { throw HarnessError("no event in \(seconds) s") }
        return event
    }
}
