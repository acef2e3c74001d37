public import Foundation
public import HeraldCore
public import HeraldGateway
public import HeraldServer
public import HeraldStorage
public import Hummingbird
public import HummingbirdTesting
public import Logging
import Synchronization
public import Testing
public import _CryptoExtras

/// A Herald node over an in-memory store with a manual clock, and one project whose
/// service-account private key the test holds.
public struct TestServer: Sendable {
    public let store: any HeraldStore
    public let clock: ManualClock
    public let node: HeraldNode
    public let project: Project
    public let key: ServiceAccountKey
    public let privateKey: _RSA.Signing.PrivateKey

    public static let logger = Logger(label: "herald-test")

    public init(
        store: any HeraldStore, clock: ManualClock, node: HeraldNode, project: Project, key: ServiceAccountKey,
        privateKey: _RSA.Signing.PrivateKey
    ) {
        self.store = store
        self.clock = clock
        self.node = node
        self.project = project
        self.key = key
        self.privateKey = privateKey
    }

    public static func make(
        store: any HeraldStore = InMemoryStore(), projectID: String = "test-project", secureConsole: Bool = false,
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> TestServer {
        let clock = ManualClock()
        let (project, key, privateKey) = try await addProject(projectID, to: store, clock: clock)
        let node = try await node(store: store, clock: clock, secureConsole: secureConsole, configure: configure)
        return TestServer(store: store, clock: clock, node: node, project: project, key: key, privateKey: privateKey)
    }

    /// A second node over the same store, clock and project.
    public static func make(sharing other: TestServer) async throws -> TestServer {
        let node = try await node(store: other.store, clock: other.clock, secureConsole: false)
        return TestServer(
            store: other.store, clock: other.clock, node: node, project: other.project, key: other.key,
            privateKey: other.privateKey)
    }

    public static func node(
        store: any HeraldStore, clock: ManualClock, secureConsole: Bool = false,
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> HeraldNode {
        var configuration = ServerConfiguration()
        configuration.dataDirectory = temporaryDirectory()
        // The tests read the metrics of an in-memory listener, as an operator opens them on loopback.
        configuration.metricsWithoutToken = true
        if secureConsole { configuration.publicURL = "https://herald.example" }
        var gateway = GatewayConfiguration()
        gateway.ports = [0]
        configuration.gateway = gateway
        configure(&configuration)
        return try await HeraldNode(configuration: configuration, store: store, clock: clock, logger: logger)
    }

    /// A server whose project may send `perMinute` downstream messages a minute (SEMANTICS T1).
    public static func make(downstreamPerMinute perMinute: Int) async throws -> TestServer {
        let server = try await make()
        var settings = server.project.settings
        settings.downstreamPerMinute = perMinute
        _ = try await server.store.updateSettings(settings, projectID: server.project.id)
        return server
    }

    public static func addProject(_ id: String, to store: any HeraldStore, clock: any HeraldClock) async throws
        -> (Project, ServiceAccountKey, _RSA.Signing.PrivateKey)
    {
        let privateKey = try signingKey(for: id)
        let key = ServiceAccountKey(
            id: SecureRandom.hex(bytes: 20), projectID: id, clientEmail: ServiceAccountKey.clientEmail(for: id),
            publicKeyPEM: privateKey.publicKey.pemRepresentation, createdAt: clock.now())
        let project = Project.make(id: id, createdAt: clock.now())
        try await store.createProject(project, firstKey: key)
        return (project, key, privateKey)
    }

    /// The RSA key of project `id`'s first service-account key: made once a process for each
    /// project id, as a new 2048-bit key is a few hundred milliseconds of a core in a debug
    /// build, and made for every test it took half of both cores for the suite's first half
    /// minute, keeping every other test's tasks from running for tens of seconds. Projects
    /// of different ids still have different keys, and each key its own id.
    static func signingKey(for id: String) throws -> _RSA.Signing.PrivateKey {
        if let made = signingKeys.withLock({ $0[id] }) { return made }
        let made = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        return signingKeys.withLock { keys in
            if let first = keys[id] { return first }
            keys[id] = made
            return made
        }
    }

    private static let signingKeys = Mutex<[String: _RSA.Signing.PrivateKey]>([:])

    /// Runs a test against the router, after the credential cache has caught up.
    public func test<Value: Sendable>(_ body: @Sendable (any TestClientProtocol) async throws -> Value) async throws
        -> Value
    {
        try await node.directory.reload(from: store)
        return try await node.makeApplication().test(.router, body)
    }

    /// A JWT signed like google-auth's assertion, with every claim overridable.
    public func assertion(
        claims overrides: [String: JSONValue] = [:], keyID: String? = nil,
        signedWith signer: _RSA.Signing.PrivateKey? = nil
    ) throws -> String {
        let now = clock.now().seconds
        var claims: [String: JSONValue] = [
            "iss": .string(key.clientEmail),
            "scope": .string(
                "https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/datastore "
                    + "https://www.googleapis.com/auth/devstorage.read_write https://www.googleapis.com/auth/firebase "
                    + "https://www.googleapis.com/auth/identitytoolkit https://www.googleapis.com/auth/userinfo.email"),
            "aud": .string("https://oauth2.googleapis.com/token"),
            "iat": .number(Double(now)),
            "exp": .number(Double(now + 3600)),
        ]
        for (name, value) in overrides { claims[name] = value }
        let header = JSONValue.stringObject([("typ", "JWT"), ("alg", "RS256"), ("kid", keyID ?? key.id)])
        let body = JSONValue.object(
            claims.filter { $0.value != .null }.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) })
        let signingInput = Base64URL.encode(header.rendered.utf8) + "." + Base64URL.encode(body.rendered.utf8)
        let signature = try (signer ?? privateKey).signature(for: Array(signingInput.utf8), padding: .insecurePKCS1v1_5)
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }

    /// Exchanges an assertion at `/token`.
    public static func exchange(_ assertion: String, client: any TestClientProtocol) async throws -> TestResponse {
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"
        return try await client.execute(
            uri: "/token", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
            body: ByteBuffer(string: form))
    }

    /// An access token for this project's key.
    public func accessToken(_ client: any TestClientProtocol) async throws -> String {
        let response = try await Self.exchange(try assertion(), client: client)
        #expect(response.status == .ok)
        return try #require(try response.json()["access_token"]?.stringValue)
    }

    /// Posts a send request.
    public static func send(
        _ body: String, project: String, token: String?, client: any TestClientProtocol
    ) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await client.execute(
            uri: "/v1/projects/\(project)/messages:send", method: .post, headers: headers,
            body: ByteBuffer(string: body))
    }
}

extension TestResponse {
    public func json() throws -> JSONValue {
        try JSONParser.parse(Array(body.readableBytesView))
    }
}
