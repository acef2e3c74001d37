import Crypto
public import HeraldCore
import NIOSSL
import SwiftASN1
import X509

/// Reads and checks what an operator uploads for Apple's push service before it is stored:
/// a `.p8` signing key with its ids, or a client certificate (PEM with its key, or PKCS#12
/// with its password). Nothing of the key is ever put in an error.
public enum APNsCredentialFile {
    /// Why an upload is refused.
    public typealias Failure = CredentialFileFailure

    /// The subject attribute Apple puts the bundle id in (UID).
    static let userID = try! ASN1ObjectIdentifier(dotRepresentation: "0.9.2342.19200300.100.1.1")
    /// The extensions that mark a certificate for APNs' development and production environments.
    static let developmentExtension = try! ASN1ObjectIdentifier(dotRepresentation: "1.2.840.113635.100.6.3.1")
    static let productionExtension = try! ASN1ObjectIdentifier(dotRepresentation: "1.2.840.113635.100.6.3.2")
    /// The largest file taken: a `.p8` key is about 250 bytes and a certificate with its key
    /// a few kilobytes, so anything near this is not one.
    public static let maximumFileBytes = 64 * 1024
    static let tooLarge = Failure("The file is larger than 64 KiB: an APNs key or certificate is a few kilobytes.")

    /// A token-based credential from a `.p8` file's text (a P-256 private key in PKCS#8
    /// PEM), its key id and team id (10 characters each, as Apple gives them).
    public static func signingKey(
        pem: String, keyID: String, teamID: String, bundleID: String, environment: APNsCredential.Environment,
        projectID: String, now: Timestamp
    ) throws(Failure) -> APNsCredential {
        guard pem.utf8.count <= maximumFileBytes else { throw tooLarge }
        guard APNsCredential.isAppleID(keyID) else { throw Failure("The key id must be 10 letters and digits.") }
        guard APNsCredential.isAppleID(teamID) else { throw Failure("The team id must be 10 letters and digits.") }
        guard APNsCredential.isBundleID(bundleID) else { throw Failure("\(bundleID) is not a bundle id.") }
        guard (try? P256.Signing.PrivateKey(pemRepresentation: pem)) != nil else {
            throw Failure("The key file is not an APNs signing key (a P-256 private key in PEM, as a .p8 file holds).")
        }
        return APNsCredential(
            projectID: projectID, secret: .signingKey(keyID: keyID, teamID: teamID, privateKeyPEM: pem),
            bundleID: bundleID, environment: environment, createdAt: now)
    }

    /// A certificate-based credential from a file's bytes: PEM holding the certificate and
    /// its private key, or PKCS#12 opened with `password`. The bundle id is the one given,
    /// else the certificate's (its subject's UID); the environment the one given, else the
    /// certificate's (Apple's development and production extensions), else both. An
    /// expired certificate is refused.
    public static func certificate(
        bytes: [UInt8], password: String?, bundleID: String?, environment: APNsCredential.Environment?,
        projectID: String, now: Timestamp
    ) throws(Failure) -> APNsCredential {
        guard bytes.count <= maximumFileBytes else { throw tooLarge }
        let leaf: NIOSSLCertificate
        let key: NIOSSLPrivateKey
        let isPEM =
            bytes.starts(with: Array("-----BEGIN".utf8))
            || String(decoding: bytes, as: UTF8.self)
                .contains("-----BEGIN")
        if isPEM {
            guard let first = (try? NIOSSLCertificate.fromPEMBytes(bytes))?.first else {
                throw Failure("The PEM file holds no certificate.")
            }
            guard let privateKey = try? NIOSSLPrivateKey(bytes: bytes, format: .pem) else {
                throw Failure("The PEM file must hold the certificate's private key too (unencrypted).")
            }
            leaf = first
            key = privateKey
        } else {
            guard let bundle = try? NIOSSLPKCS12Bundle(buffer: bytes, passphrase: Array((password ?? "").utf8)),
                let first = bundle.certificateChain.first
            else { throw Failure("The file is neither PEM nor PKCS#12 that this password opens.") }
            leaf = first
            key = bundle.privateKey
        }
        // The TLS library refuses a private key that is not the certificate's: APNs would
        // refuse every connection made with them.
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateChain = [.certificate(leaf)]
        tls.privateKey = .privateKey(key)
        guard (try? NIOSSLContext(configuration: tls)) != nil else {
            throw Failure("The private key is not the certificate's.")
        }
        guard let der = try? leaf.toDERBytes(), let certificate = try? Certificate(derEncoded: der) else {
            throw Failure("The certificate cannot be read.")
        }
        guard certificate.notValidAfter.timeIntervalSince1970 * 1000 > Double(now.milliseconds) else {
            throw Failure("The certificate expired.")
        }
        let named = certificate.subject.lazy.flatMap { $0 }.first { $0.type == userID }.flatMap { String($0.value) }
        guard let bundleID = bundleID ?? named else {
            throw Failure("The certificate names no bundle id: give it with --bundle-id.")
        }
        guard APNsCredential.isBundleID(bundleID) else { throw Failure("\(bundleID) is not a bundle id.") }
        let marked = (
            development: certificate.extensions[oid: developmentExtension] != nil,
            production: certificate.extensions[oid: productionExtension] != nil
        )
        let read: APNsCredential.Environment =
            switch marked {
            case (true, false): .development
            case (false, true): .production
            default: .both
            }
        return APNsCredential(
            projectID: projectID, secret: .certificate(bytes: bytes, password: isPEM ? nil : password ?? ""),
            bundleID: bundleID, environment: environment ?? read, createdAt: now)
    }
}
