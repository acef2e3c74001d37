import Crypto
import Foundation
import HeraldCore
import HeraldTestSupport
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import Testing
import X509

@testable import HeraldGateway

/// The drop-in CA (FCM's host names resolved to Herald): its certificate is good for
/// exactly Google's names and the operator's, and even its own key cannot make one a
/// standard TLS client (BoringSSL, through NIOSSL) accepts for any other name.
@Suite struct DropInCertificatesTests {
    /// Whether a TLS client trusting only `ca` completes a handshake with a server showing
    /// `certificate`, asking for `hostname`.
    func handshakes(
        certificate: Certificate, key: P256.Signing.PrivateKey, ca: Certificate, hostname: String
    ) async throws -> Bool {
        let serverContext = try NIOSSLContext(
            configuration: .makeServerConfiguration(
                certificateChain: [
                    .certificate(
                        try NIOSSLCertificate(bytes: Array(try certificate.serializeAsPEM().derBytes), format: .der))
                ],
                privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(key.derRepresentation), format: .der))))
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: serverContext))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        defer { server.close(promise: nil) }
        var client = TLSConfiguration.makeClientConfiguration()
        client.trustRoots = .certificates([
            try NIOSSLCertificate(bytes: Array(try ca.serializeAsPEM().derBytes), format: .der)
        ])
        let clientContext = try NIOSSLContext(configuration: client)
        let outcome = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Bool.self)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(
                        NIOSSLClientHandler(context: clientContext, serverHostname: hostname),
                        HandshakeOutcome(outcome: outcome))
                }
            }
            .connect(host: "127.0.0.1", port: server.localAddress!.port!).get()
        defer { channel.close(promise: nil) }
        return try await outcome.futureResult.get()
    }

    @Test func theCertificateIsGoodForGooglesNamesAndTheOperatorsAndNoOther() async throws {
        let names = DropInCertificates.names(["push.example.org", "10.0.0.5", "FCM.googleapis.com"])
        #expect(names == DropInHosts.googleHostNames + ["push.example.org"])
        let issued = try DropInCertificates.issue(names: names)
        for name in ["fcm.googleapis.com", "mtalk.google.com", "oauth2.googleapis.com", "push.example.org"] {
            #expect(
                try await handshakes(certificate: issued.server, key: issued.serverKey, ca: issued.ca, hostname: name))
        }
        #expect(
            try await handshakes(
                certificate: issued.server, key: issued.serverKey, ca: issued.ca, hostname: "www.google.com") == false)
    }

    @Test func theCAsOwnKeyCannotMakeACertificateForAnotherName() async throws {
        let issued = try DropInCertificates.issue(names: DropInCertificates.names([]))
        for rogue in ["www.google.com", "accounts.google.com", "bank.example"] {
            let key = P256.Signing.PrivateKey()
            let certificate = try DropInCertificates.certificate(
                for: [rogue], key: key, ca: issued.ca, caKey: issued.caKey)
            #expect(try await handshakes(certificate: certificate, key: key, ca: issued.ca, hostname: rogue) == false)
        }
        // A name inside the constraints signed the same way is accepted: the refusal above is
        // the constraint's, not the way the certificate was made.
        let key = P256.Signing.PrivateKey()
        let allowed = try DropInCertificates.certificate(
            for: ["fcm.googleapis.com"], key: key, ca: issued.ca, caKey: issued.caKey)
        #expect(try await handshakes(certificate: allowed, key: key, ca: issued.ca, hostname: "fcm.googleapis.com"))
    }

    @Test func theFilesAreKeptPrivateAndMadeAgainOnlyWhenTheNamesChange() throws {
        let directory = createdTemporaryDirectory()
        let first = try DropInCertificates.loadOrCreate(dataDirectory: directory, hostnames: ["push.example.org"])
        let ca = try String(contentsOfFile: first.caPath, encoding: .utf8)
        let mode = try FileManager.default.attributesOfItem(atPath: first.keyPath)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        _ = try DropInCertificates.loadOrCreate(dataDirectory: directory, hostnames: ["PUSH.example.org"])
        #expect(try String(contentsOfFile: first.caPath, encoding: .utf8) == ca)
        _ = try DropInCertificates.loadOrCreate(dataDirectory: directory, hostnames: ["other.example.org"])
        #expect(try String(contentsOfFile: first.caPath, encoding: .utf8) != ca)
    }
}

/// Completes `outcome` with whether the TLS handshake succeeded.
private final class HandshakeOutcome: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    let outcome: EventLoopPromise<Bool>

    init(outcome: EventLoopPromise<Bool>) {
        self.outcome = outcome
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event { outcome.succeed(true) }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        outcome.succeed(false)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        outcome.succeed(false)
        context.fireChannelInactive()
    }
}
