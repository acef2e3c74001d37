import Crypto
import Foundation
import HeraldCore
import HeraldProtocol
import HeraldStorage
import HeraldTestSupport
import Hummingbird
import HummingbirdHTTP2
import HummingbirdTesting
import NIOSSL
import Synchronization
import Testing
import X509

@testable import HeraldGateway
@testable import HeraldHandOffs

/// SEMANTICS A2, A3: Herald's connection to APNs speaks HTTP/2 over TLS, with a provider
/// token it makes on the schedule APNs allows, or with a client certificate, and reads APNs'
/// status and reason for each request. Checked against a live local HTTP/2 receiver.
@Suite struct APNsConnectionTests {
    /// One request as the receiver saw it.
    struct Seen: Sendable, Equatable {
        var path: String
        var authorization: String?
        var apnsID: String?
    }

    /// A CA, the receiver's certificate for `localhost` it signed, and client certificates
    /// it signs.
    struct Certificates {
        let ca: Certificate
        let caKey: P256.Signing.PrivateKey
        let server: NIOSSLCertificate
        let serverKey: NIOSSLPrivateKey

        init() throws {
            (ca, caKey) = try CertificateIssuer.authority(commonName: "Test CA", years: 1)
            let key = P256.Signing.PrivateKey()
            let certificate = try CertificateIssuer.server(
                names: [.dnsName("localhost")], commonName: "localhost", key: key, ca: ca, caKey: caKey, years: 1)
            server = try NIOSSLCertificate(bytes: Array(try certificate.serializeAsPEM().pemString.utf8), format: .pem)
            serverKey = try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem)
        }

        /// A client certificate and its key in one PEM, as a certificate credential holds them.
        func client() throws -> [UInt8] {
            let key = P256.Signing.PrivateKey()
            let publicKey = Certificate.PublicKey(key.publicKey)
            let certificate = try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
                notValidBefore: Date().addingTimeInterval(-3600), notValidAfter: Date().addingTimeInterval(86400),
                issuer: ca.subject, subject: try DistinguishedName { CommonName("com.example.app") },
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                    try ExtendedKeyUsage([.clientAuth])
                },
                issuerPrivateKey: Certificate.PrivateKey(caKey))
            return Array((try certificate.serializeAsPEM().pemString + "\n" + key.pemRepresentation).utf8)
        }
    }

    let now = Timestamp(seconds: 1_800_000_000)

    static let good = String(repeating: "ab", count: 32)
    /// A device token the receiver refuses.
    static let bad = String(repeating: "cd", count: 32)

    /// The request that hands `persistentID` off to `deviceToken`, from a stanza tailored for Apple.
    func request(_ deviceToken: String, persistentID: String) throws -> APNsRequest {
        var stanza = McsProto_DataMessageStanza()
        stanza.from = "123"
        stanza.category = "com.example.app"
        stanza.appData = [
            .with {
                $0.key = "content-type"
                $0.value = "application/apns+json"
            },
            .with {
                $0.key = "apns-push-type"
                $0.value = "alert"
            },
        ]
        stanza.rawData = Data(#"{"aps":{"alert":"hi"}}"#.utf8)
        let entry = QueuedMessage(
            sequence: 1, androidID: 1, token: "t", persistentID: persistentID, messageID: "m", projectID: "p",
            stanza: try stanza.serializedBytes(), createdAt: now, expiresAt: now.adding(seconds: 60))
        let address = try #require(APNsAddress(deviceToken: deviceToken, isSandbox: false))
        return try APNsRequest(HandOff(entry: entry, destination: .apns(address)), bundleID: "com.example.app")
    }

    /// What a test talks to: the receiver's URL, what it saw so far, its certificates, and the
    /// file of their CA, which connections trust.
    struct Receiver: Sendable {
        let baseURL: String
        let seen: @Sendable () -> [Seen]
        let certificates: Certificates
        let caFile: String

        /// A connection to the receiver with `secret`.
        func connection(_ secret: APNsCredential.Secret, now: Timestamp) async throws -> APNsConnection {
            try await APNsConnection(
                credential: APNsCredential(
                    projectID: "p", secret: secret, bundleID: "com.example.app", environment: .production,
                    createdAt: now),
                baseURL: baseURL, trustRoots: [caFile])
        }
    }

    /// Runs an APNs-like receiver for the length of `body`: 200 for every device token but
    /// `bad`, which gets 400 `BadDeviceToken`. With `clientCertificates` it takes only
    /// connections with a client certificate its CA signed.
    func withReceiver(clientCertificates: Bool = false, _ body: @Sendable (Receiver) async throws -> Void)
        async throws
    {
        let directory = createdTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let certificates = try Certificates()
        let caFile = directory + "/ca.pem"
        try certificates.ca.serializeAsPEM().pemString.write(toFile: caFile, atomically: true, encoding: .utf8)
        let seen = Mutex<[Seen]>([])
        let router = Router()
        router.post("/3/device/:token") { request, context -> Response in
            _ = try await request.body.collect(upTo: 4096)
            seen.withLock {
                $0.append(
                    Seen(
                        path: request.uri.path, authorization: request.headers[.authorization],
                        apnsID: request.headers[.init("apns-id")!]))
            }
            guard context.parameters.get("token") != Self.bad else {
                return Response(
                    status: .badRequest, headers: [.contentType: "application/json"],
                    body: .init(byteBuffer: ByteBuffer(string: #"{"reason":"BadDeviceToken"}"#)))
            }
            return Response(status: .ok)
        }
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(certificates.server)], privateKey: .privateKey(certificates.serverKey))
        if clientCertificates {
            tls.certificateVerification = .noHostnameVerification
            tls.trustRoots = .certificates([
                try NIOSSLCertificate(bytes: Array(try certificates.ca.serializeAsPEM().pemString.utf8), format: .pem)
            ])
        }
        try await Application(
            router: router, server: try .http2Upgrade(tlsConfiguration: tls),
            configuration: .init(address: .hostname("127.0.0.1", port: 0))
        ).test(.live) { client in
            let port = try #require(client.port)
            try await body(
                Receiver(
                    baseURL: "https://localhost:\(port)", seen: { seen.withLock { $0 } }, certificates: certificates,
                    caFile: caFile))
        }
    }

    /// The provider token's header and claims, once its signature is checked with `key`.
    func verified(_ authorization: String?, key: P256.Signing.PublicKey) throws -> (JSONValue, JSONValue) {
        let token = try #require(authorization?.split(separator: " ").last)
        let parts = token.split(separator: ".")
        try #require(parts.count == 3)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        #expect(key.isValidSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8)))
        return (
            try JSONParser.parse(try #require(Base64URL.decode(parts[0]))),
            try JSONParser.parse(try #require(Base64URL.decode(parts[1])))
        )
    }

    @Test func A3_aTokenCredentialSignsEachRequestWithAProviderTokenAndReadsEachAnswer() async throws {
        let key = P256.Signing.PrivateKey()
        try await withReceiver { receiver in
            let connection = try await receiver.connection(
                .signingKey(keyID: "KEY1234567", teamID: "TEAM123456", privateKeyPEM: key.pemRepresentation), now: now)
            let answers = await connection.send(
                [try request(Self.good, persistentID: "0:1"), try request(Self.bad, persistentID: "0:2")], now: now)
            await connection.shutdown()

            #expect(answers.map { $0?.status } == [200, 400])
            #expect(answers.map { $0?.reason } == [nil, "BadDeviceToken"])
            let requests = receiver.seen().sorted { $0.path < $1.path }
            #expect(requests.map(\.path) == ["/3/device/" + Self.good, "/3/device/" + Self.bad])
            #expect(
                requests.map(\.apnsID) == [
                    APNsRequest.apnsID(persistentID: "0:1"), APNsRequest.apnsID(persistentID: "0:2"),
                ])
            // One token for both requests: ES256, the key's id, the team, made now.
            #expect(requests[0].authorization == requests[1].authorization)
            let (header, claims) = try verified(requests[0].authorization, key: key.publicKey)
            #expect(header["alg"]?.stringValue == "ES256" && header["kid"]?.stringValue == "KEY1234567")
            #expect(claims["iss"]?.stringValue == "TEAM123456")
            #expect(claims["iat"]?.numberValue == Double(now.seconds))
        }
    }

    @Test func A3_theProviderTokenIsKeptFiftyMinutesAndMadeAgainEarlyOnlyAfterTwenty() async throws {
        let key = P256.Signing.PrivateKey()
        try await withReceiver { receiver in
            let connection = try await receiver.connection(
                .signingKey(keyID: "KEY1234567", teamID: "TEAM123456", privateKeyPEM: key.pemRepresentation), now: now)
            func tokenSent(minutes: Int64) async throws -> String {
                let answers = await connection.send(
                    [try request(Self.good, persistentID: "0:\(minutes)")], now: now.adding(seconds: minutes * 60))
                #expect(answers.first??.status == 200)
                return try #require(receiver.seen().last?.authorization)
            }
            let first = try await tokenSent(minutes: 0)
            #expect(try await tokenSent(minutes: 49) == first)
            // APNs said the token expired: too young to replace at 19 minutes, replaced at 20.
            #expect(try connection.renewToken(now.adding(seconds: 19 * 60)) == false)
            #expect(try await tokenSent(minutes: 19) == first)
            #expect(try connection.renewToken(now.adding(seconds: 20 * 60)) == true)
            let second = try await tokenSent(minutes: 20)
            #expect(second != first)
            #expect(try verified(second, key: key.publicKey).1["iat"]?.numberValue == Double(now.seconds + 20 * 60))
            // Kept fifty minutes from when it was made, then made again.
            #expect(try await tokenSent(minutes: 69) == second)
            #expect(try await tokenSent(minutes: 70) != second)
            await connection.shutdown()
        }
    }

    @Test func A2_aCertificateCredentialConnectsWithItsClientCertificateAndNoToken() async throws {
        let stranger = try Certificates()
        try await withReceiver(clientCertificates: true) { receiver in
            for (client, status) in [(try receiver.certificates.client(), 200), (try stranger.client(), nil)] {
                let connection = try await receiver.connection(.certificate(bytes: client, password: nil), now: now)
                let answers = await connection.send([try request(Self.good, persistentID: "0:1")], now: now)
                await connection.shutdown()
                // A certificate another CA signed is refused in the handshake: no answer.
                #expect(answers.map { $0?.status } == [status])
            }
            #expect(
                receiver.seen() == [
                    Seen(
                        path: "/3/device/" + Self.good, authorization: nil,
                        apnsID: APNsRequest.apnsID(persistentID: "0:1"))
                ])
        }
    }
}
