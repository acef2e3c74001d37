import Crypto
import Foundation
import HeraldCore
import HeraldHandOffs
import SwiftASN1
import Testing
import X509

/// What an operator uploads for APNs is checked before it is stored, and nothing of a key
/// reaches an error or the summary shown.
@Suite struct APNsCredentialFileTests {
    let now = Timestamp(seconds: 1_800_000_000)

    @Test func aP8KeyWithItsIDsBecomesATokenCredential() throws {
        let pem = P256.Signing.PrivateKey().pemRepresentation
        let credential = try APNsCredentialFile.signingKey(
            pem: pem, keyID: "ABC123DEFG", teamID: "TEAM123456", bundleID: "com.example.app", environment: .both,
            projectID: "p", now: now)
        #expect(credential.kind == .token)
        #expect(credential.secret == .signingKey(keyID: "ABC123DEFG", teamID: "TEAM123456", privateKeyPEM: pem))
        #expect(!credential.summary.contains("PRIVATE"))
        #expect(credential.summary.contains("ABC123DEFG"))
    }

    @Test func aWrongKeyOrMalformedIDsAreRefusedWithoutTheKeyInTheError() {
        let rsaLike = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
        for (pem, keyID, teamID, bundle) in [
            (rsaLike, "ABC123DEFG", "TEAM123456", "com.example.app"),
            (P256.Signing.PrivateKey().pemRepresentation, "short", "TEAM123456", "com.example.app"),
            (P256.Signing.PrivateKey().pemRepresentation, "ABC123DEFG", "team123456", "com.example.app"),
            (P256.Signing.PrivateKey().pemRepresentation, "ABC123DEFG", "TEAM123456", "bad bundle"),
        ] {
            #expect(throws: APNsCredentialFile.Failure.self) {
                _ = try APNsCredentialFile.signingKey(
                    pem: pem, keyID: keyID, teamID: teamID, bundleID: bundle, environment: .both, projectID: "p",
                    now: now)
            }
        }
    }

    /// A certificate in Apple's shape: the bundle id as the subject's UID, the
    /// environment as Apple's extension.
    func applesShape(production: Bool, expired: Bool = false, otherKey: Bool = false) throws -> [UInt8] {
        let key = P256.Signing.PrivateKey()
        let name = DistinguishedName([
            RelativeDistinguishedName(
                RelativeDistinguishedName.Attribute(
                    type: try ASN1ObjectIdentifier(dotRepresentation: "0.9.2342.19200300.100.1.1"),
                    utf8String: "com.example.certified")),
            RelativeDistinguishedName(
                RelativeDistinguishedName.Attribute(
                    type: .RDNAttributeType.commonName, utf8String: "Apple Push Services: com.example.certified")),
        ])
        let start = Date(timeIntervalSince1970: Double(now.milliseconds) / 1000 - 86_400)
        let oid = try ASN1ObjectIdentifier(
            dotRepresentation: production ? "1.2.840.113635.100.6.3.2" : "1.2.840.113635.100.6.3.1")
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: start, notValidAfter: start + (expired ? 3_600 : 365 * 86_400), issuer: name,
            subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Certificate.Extension(oid: oid, critical: false, value: [0x05, 0x00])
            }, issuerPrivateKey: .init(key))
        let kept = otherKey ? P256.Signing.PrivateKey() : key
        let pem = try certificate.serializeAsPEM().pemString + "\n" + kept.pemRepresentation + "\n"
        return Array(pem.utf8)
    }

    @Test func aPEMCertificateNamesItsBundleIDAndEnvironment() throws {
        let credential = try APNsCredentialFile.certificate(
            bytes: try applesShape(production: true), password: nil, bundleID: nil, environment: nil, projectID: "p",
            now: now)
        #expect(credential.kind == .certificate)
        #expect(credential.bundleID == "com.example.certified")
        #expect(credential.environment == .production)
        let development = try APNsCredentialFile.certificate(
            bytes: try applesShape(production: false), password: nil, bundleID: "com.example.other",
            environment: nil, projectID: "p", now: now)
        #expect(development.environment == .development && development.bundleID == "com.example.other")
    }

    @Test func anExpiredCertificateOrOneWithoutItsKeyIsRefused() throws {
        #expect(throws: APNsCredentialFile.Failure("The certificate expired.")) {
            _ = try APNsCredentialFile.certificate(
                bytes: try applesShape(production: true, expired: true), password: nil, bundleID: nil,
                environment: nil, projectID: "p", now: now)
        }
        let withoutKey = String(decoding: try applesShape(production: true), as: UTF8.self)
            .components(separatedBy: "-----BEGIN PRIVATE KEY-----")[0]
        #expect(throws: APNsCredentialFile.Failure.self) {
            _ = try APNsCredentialFile.certificate(
                bytes: Array(withoutKey.utf8), password: nil, bundleID: nil, environment: nil, projectID: "p", now: now)
        }
        #expect(throws: APNsCredentialFile.Failure.self) {
            _ = try APNsCredentialFile.certificate(
                bytes: [1, 2, 3], password: "x", bundleID: nil, environment: nil, projectID: "p", now: now)
        }
    }

    /// An unrelated private key, or a 50 MB file, was stored and only failed at APNs.
    @Test func aCertificateWithAnotherKeyOrAnOversizedFileIsRefused() throws {
        #expect(throws: APNsCredentialFile.Failure("The private key is not the certificate's.")) {
            _ = try APNsCredentialFile.certificate(
                bytes: try applesShape(production: true, otherKey: true), password: nil, bundleID: nil,
                environment: nil, projectID: "p", now: now)
        }
        let padded = try applesShape(production: true) + Array(repeating: UInt8(ascii: "\n"), count: 64 * 1024)
        #expect(throws: APNsCredentialFile.Failure.self) {
            _ = try APNsCredentialFile.certificate(
                bytes: padded, password: nil, bundleID: nil, environment: nil, projectID: "p", now: now)
        }
        let key = P256.Signing.PrivateKey().pemRepresentation + String(repeating: "\n", count: 64 * 1024)
        #expect(throws: APNsCredentialFile.Failure.self) {
            _ = try APNsCredentialFile.signingKey(
                pem: key, keyID: "ABC123DEFG", teamID: "TEAM123456", bundleID: "com.example.app", environment: .both,
                projectID: "p", now: now)
        }
    }
}
