import Crypto
import Foundation
import HeraldCore
import HeraldStorage
import NIOSSL
import SwiftASN1
public import X509

/// The TLS identity of drop-in mode, where the fleet's resolver maps FCM's host names to
/// Herald: a CA of its own, whose name constraints permit only those names and the
/// operator's, and one server certificate it signed for exactly them. The CA's private key
/// signs that one certificate and is then thrown away, and a copy of it would be worth
/// nothing anyway: a certificate it signs for any other name fails verification, because
/// clients enforce the constraints (RFC 5280 §4.2.1.10).
public struct DropInCertificates: Sendable {
    /// The CA the fleet trusts.
    public var caPath: String
    /// The server certificate chain and its key.
    public var certificatePath: String
    public var keyPath: String

    /// Loads the drop-in certificates in `dataDirectory/tls`, making them when they do not
    /// exist or name other host names than Google's, Mozilla's when `mozilla` (its push
    /// protocol is served), and `hostnames` (the operator's own). A new set has a new CA,
    /// which the fleet must trust anew.
    public static func loadOrCreate(dataDirectory: String, hostnames: [String] = [], mozilla: Bool = false) throws
        -> DropInCertificates
    {
        let directory = (dataDirectory as NSString).appendingPathComponent("tls")
        let files = DropInCertificates(
            caPath: (directory as NSString).appendingPathComponent("drop-in-ca.pem"),
            certificatePath: (directory as NSString).appendingPathComponent("drop-in-cert.pem"),
            keyPath: (directory as NSString).appendingPathComponent("drop-in-key.pem"))
        let names = Self.names((mozilla ? DropInHosts.mozillaHostNames : []) + hostnames)
        if let existing = try? String(contentsOfFile: files.certificatePath, encoding: .utf8),
            let first = try? PEMDocument.parseMultiple(pemString: existing).first,
            let certificate = try? Certificate(pemDocument: first),
            Set(Self.dnsNames(of: certificate)) == Set(names),
            FileManager.default.fileExists(atPath: files.caPath), FileManager.default.fileExists(atPath: files.keyPath)
        {
            return files
        }
        try PrivateDirectory.prepare(directory)
        let issued = try issue(names: names)
        try CertificateIssuer.writePrivate(try issued.ca.serializeAsPEM().pemString + "\n", to: files.caPath)
        try CertificateIssuer.writePrivate(
            try issued.server.serializeAsPEM().pemString + "\n" + (try issued.ca.serializeAsPEM().pemString) + "\n",
            to: files.certificatePath)
        try CertificateIssuer.writePrivate(issued.serverKey.pemRepresentation + "\n", to: files.keyPath)
        return files
    }

    /// Google's host names and `hostnames`, each once, lower-cased.
    static func names(_ hostnames: [String]) -> [String] {
        var seen = Set<String>()
        // Host names only: the CA permits no IP address.
        let own = hostnames.map { $0.lowercased() }.filter { IPv4Address($0) == nil && !$0.contains(":") }
        return (DropInHosts.googleHostNames + own).filter { seen.insert($0).inserted }
    }

    /// A certificate's DNS subject alternative names.
    static func dnsNames(of certificate: Certificate) -> [String] {
        guard let names = try? certificate.extensions.subjectAlternativeNames else { return [] }
        return names.compactMap { name in
            if case .dnsName(let text) = name { return text }
            return nil
        }
    }

    /// A new CA constrained to `names`, its key, and a server certificate it signed for them.
    static func issue(names: [String]) throws -> (
        ca: Certificate, caKey: P256.Signing.PrivateKey, server: Certificate, serverKey: P256.Signing.PrivateKey
    ) {
        // Only these DNS names, and no IP address at all (a constraint on DNS names alone
        // would leave addresses open).
        let constraints = NameConstraints(
            permittedDNSDomains: names,
            excludedIPRanges: [
                ASN1OctetString(contentBytes: ArraySlice([UInt8](repeating: 0, count: 8))),
                ASN1OctetString(contentBytes: ArraySlice([UInt8](repeating: 0, count: 32))),
            ])
        let (ca, caKey) = try CertificateIssuer.authority(
            commonName: "Herald drop-in CA (FCM host names only)", constraints: constraints, years: 10)
        let serverKey = P256.Signing.PrivateKey()
        let server = try certificate(for: names, key: serverKey, ca: ca, caKey: caKey)
        return (ca, caKey, server, serverKey)
    }

    /// A server certificate for `names`, signed by `caKey` as `ca`.
    static func certificate(
        for names: [String], key: P256.Signing.PrivateKey, ca: Certificate, caKey: P256.Signing.PrivateKey
    ) throws -> Certificate {
        try CertificateIssuer.server(
            names: names.map { .dnsName($0) }, commonName: names.first ?? "localhost", key: key, ca: ca,
            caKey: caKey, years: 2)
    }
}

extension DropInCertificates? {
    /// `configuration`, showing drop-in mode's certificate instead to a client whose TLS
    /// server name is one of FCM's host names (a device looking for `mtalk.google.com`).
    func choosing(_ configuration: TLSConfiguration) throws -> TLSConfiguration {
        guard let self else { return configuration }
        var configuration = configuration
        let chain = try NIOSSLCertificate.fromPEMFile(self.certificatePath).map {
            NIOSSLCertificateSource.certificate($0)
        }
        let key = NIOSSLPrivateKeySource.privateKey(try NIOSSLPrivateKey(file: self.keyPath, format: .pem))
        let names = Set(DropInHosts.googleHostNames)
        configuration.sslContextCallback = { hello, promise in
            var override = NIOSSLContextConfigurationOverride()
            if let name = hello.serverHostname?.lowercased(), names.contains(name) {
                override.certificateChain = chain
                override.privateKey = key
            }
            promise.succeed(override)
        }
        return configuration
    }
}
