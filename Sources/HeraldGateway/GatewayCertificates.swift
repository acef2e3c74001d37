import Crypto
import Foundation
import HeraldStorage
public import NIOSSL
import SwiftASN1
import X509

/// The gateway's TLS identity. Unless an operator gives certificate files, Herald makes
/// its own CA and a server certificate signed by it on first start, and keeps both in
/// the data directory; devices trust the CA file (`ca.pem`).
public struct GatewayCertificates: Sendable {
    /// The CA certificate devices must trust.
    public var caPath: String
    /// The server certificate chain.
    public var certificatePath: String
    /// The server private key.
    public var keyPath: String

    /// Loads the certificates in `dataDirectory/tls`, making them if they do not exist.
    /// The server certificate names `localhost`, `127.0.0.1`, `::1` and `hostnames`.
    public static func loadOrCreate(dataDirectory: String, hostnames: [String] = []) throws -> GatewayCertificates {
        let directory = (dataDirectory as NSString).appendingPathComponent("tls")
        let files = GatewayCertificates(
            caPath: (directory as NSString).appendingPathComponent("ca.pem"),
            certificatePath: (directory as NSString).appendingPathComponent("gateway-cert.pem"),
            keyPath: (directory as NSString).appendingPathComponent("gateway-key.pem"))
        let manager = FileManager.default
        if [files.caPath, files.certificatePath, files.keyPath].allSatisfy(manager.fileExists(atPath:)) {
            return files
        }
        try PrivateDirectory.prepare(directory)
        let (ca, server, serverKey) = try makeCertificates(hostnames: hostnames)
        try CertificateIssuer.writePrivate(ca, to: files.caPath)
        try CertificateIssuer.writePrivate(server + ca, to: files.certificatePath)
        try CertificateIssuer.writePrivate(serverKey, to: files.keyPath)
        return files
    }

    /// A server TLS configuration with this certificate chain and key.
    public func serverConfiguration() throws -> TLSConfiguration {
        try Self.serverConfiguration(certificateChain: certificatePath, privateKey: keyPath)
    }

    /// A server TLS configuration from PEM files.
    public static func serverConfiguration(certificateChain: String, privateKey: String) throws -> TLSConfiguration {
        let chain = try NIOSSLCertificate.fromPEMFile(certificateChain).map { NIOSSLCertificateSource.certificate($0) }
        let key = try NIOSSLPrivateKey(file: privateKey, format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        return configuration
    }

    private static func makeCertificates(hostnames: [String]) throws -> (String, String, String) {
        let (ca, caKey) = try CertificateIssuer.authority(commonName: "Herald device gateway CA", years: 20)
        var names: [GeneralName] = [
            .dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
            .ipAddress(ASN1OctetString(contentBytes: ArraySlice(Array(repeating: 0, count: 15) + [1]))),
        ]
        for hostname in hostnames where hostname != "localhost" {
            if let address = IPv4Address(hostname) {
                names.append(.ipAddress(ASN1OctetString(contentBytes: ArraySlice(address.bytes))))
            } else {
                names.append(.dnsName(hostname))
            }
        }
        let serverKey = P256.Signing.PrivateKey()
        let server = try CertificateIssuer.server(
            names: names, commonName: hostnames.first ?? "localhost", key: serverKey, ca: ca, caKey: caKey, years: 5)
        return (
            try ca.serializeAsPEM().pemString + "\n", try server.serializeAsPEM().pemString + "\n",
            serverKey.pemRepresentation + "\n"
        )
    }
}

/// A dotted IPv4 address.
struct IPv4Address {
    var bytes: [UInt8]

    init?(_ text: String) {
        let parts = text.split(separator: ".")
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard let value = UInt8(part) else { return nil }
            bytes.append(value)
        }
        self.bytes = bytes
    }
}
