public import HeraldClient
public import HeraldProtocol
public import NIOCore
public import NIOSSL

/// The Herald a device benchmark drives: its HTTP API, a project's credentials and API
/// key (to register devices), and its device gateway.
public struct BenchTarget: Sendable {
    public var server: HTTPURL
    public var credentials: ServiceAccountCredentials
    public var apiKey: String
    public var gatewayHost: String
    public var gatewayPort: Int
    public var tls: NIOSSLContext?

    public init(
        server: HTTPURL, credentials: ServiceAccountCredentials, apiKey: String, gatewayHost: String, gatewayPort: Int,
        tls: NIOSSLContext?
    ) {
        self.server = server
        self.credentials = credentials
        self.apiKey = apiKey
        self.gatewayHost = gatewayHost
        self.gatewayPort = gatewayPort
        self.tls = tls
    }
}

/// A registered app instance a benchmark can connect as.
public struct BenchInstance: Sendable, Codable {
    public var androidID: UInt64
    public var securityToken: UInt64
    public var token: String
}

extension BenchTarget {
    /// Checks in and registers `count` Android app instances of the project, over
    /// `workers` parallel HTTP connections.
    public func registerInstances(_ count: Int, workers: Int = 16) async throws -> [BenchInstance] {
        let registrar = try DeviceRegistrar(server: server.text)
        let installation = try await registrar.install(
            projectID: credentials.projectID, apiKey: apiKey, appID: "herald-bench")
        return try await withThrowingTaskGroup(of: [BenchInstance].self) { group in
            for worker in 0..<workers {
                let share = count / workers + (worker < count % workers ? 1 : 0)
                group.addTask {
                    var made: [BenchInstance] = []
                    for _ in 0..<share {
                        let (androidID, securityToken) = try await registrar.checkin(existing: nil)
                        let token = try await registrar.register3(
                            androidID: androidID, securityToken: securityToken,
                            fields: [
                                ("app", "com.herald.bench"), ("device", String(androidID)),
                                ("sender", installation.projectNumber),
                            ])
                        made.append(BenchInstance(androidID: androidID, securityToken: securityToken, token: token))
                    }
                    return made
                }
            }
            var all: [BenchInstance] = []
            for try await made in group { all += made }
            return all
        }
    }

    /// Connects and logs in the instances' devices, 200 logins under way at most; answers
    /// their channels in the instances' order. `onMessage` hears each message a device gets,
    /// with the device's index.
    public func connect(
        _ instances: [BenchInstance],
        onMessage: @escaping @Sendable (Int, McsProto_DataMessageStanza, ContinuousClock.Instant) -> Void = { _, _, _ in
        }
    ) async throws -> [any Channel] {
        var channels: [(Int, any Channel)] = []
        try await withThrowingTaskGroup(of: (Int, any Channel).self) { group in
            for (index, instance) in instances.enumerated() {
                group.addTask {
                    let channel = try await BenchDevice.connect(
                        host: gatewayHost, port: gatewayPort, localAddress: nil, tls: tls,
                        androidID: instance.androidID, securityToken: instance.securityToken
                    ) { stanza, at in onMessage(index, stanza, at) }
                    return (index, channel)
                }
                if index % 200 == 199 { channels.append(try await group.next()!) }
            }
            for try await pair in group { channels.append(pair) }
        }
        return channels.sorted { $0.0 < $1.0 }.map(\.1)
    }
}
