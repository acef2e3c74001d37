import Crypto
import Foundation
import SwiftASN1
import X509

/// Makes Herald's own CAs and the server certificates they sign (the device gateway's, and
/// drop-in mode's), all P-256 with ECDSA-SHA256.
enum CertificateIssuer {
    /// A CA that signs server certificates only (path length 0), constrained to `constraints`
    /// when given.
    static func authority(
        commonName: String, constraints: NameConstraints? = nil, years: Double, now: Date = Date()
    ) throws -> (certificate: Certificate, key: P256.Signing.PrivateKey) {
        let key = P256.Signing.PrivateKey()
        let publicKey = Certificate.PublicKey(key.publicKey)
        let name = try DistinguishedName {
            OrganizationName("Herald")
            CommonName(commonName)
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(years * 365 * 86400),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                if let constraints { Critical(constraints) }
                SubjectKeyIdentifier(hash: publicKey)
            },
            issuerPrivateKey: Certificate.PrivateKey(key))
        return (certificate, key)
    }

    /// A TLS server certificate for `names`, signed by `caKey` as `ca`.
    static func server(
        names: [GeneralName], commonName: String, key: P256.Signing.PrivateKey, ca: Certificate,
        caKey: P256.Signing.PrivateKey, years: Double, now: Date = Date()
    ) throws -> Certificate {
        let publicKey = Certificate.PublicKey(key.publicKey)
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(years * 365 * 86400),
            issuer: ca.subject,
            subject: try DistinguishedName {
                OrganizationName("Herald")
                CommonName(commonName)
            },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
                SubjectKeyIdentifier(hash: publicKey)
                if let identifier = try ca.extensions.subjectKeyIdentifier {
                    AuthorityKeyIdentifier(keyIdentifier: identifier.keyIdentifier)
                }
            },
            issuerPrivateKey: Certificate.PrivateKey(caKey))
    }

    /// Writes a PEM file readable by its owner alone, like the rest of the data directory
    /// (devices and fleets get copies of the CAs).
    static func writePrivate(_ text: String, to path: String) throws {
        guard
            FileManager.default.createFile(
                atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteUnknown) }
    }
}
