public import HeraldCore
import _CryptoExtras

/// A service-account key file in Google's JSON format, which google-auth and the
/// firebase-admin SDKs load unchanged; its `token_uri` points at Herald.
public struct ServiceAccountKeyFile: Sendable {
    /// The project the key signs for.
    public var projectID: String
    /// The key id (`private_key_id`).
    public var keyID: String
    /// The PKCS#8 PEM private key.
    public var privateKeyPEM: String
    /// The service account's email.
    public var clientEmail: String
    /// A numeric client id.
    public var clientID: String
    /// Herald's public base URL.
    public var publicURL: String

    /// A new RSA key for the project's service account: its record, which keeps only the
    /// public key, and its file, the only place the private key is ever written.
    public static func issue(projectID: String, publicURL: String, now: Timestamp) throws
        -> (key: ServiceAccountKey, file: ServiceAccountKeyFile)
    {
        let privateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let key = ServiceAccountKey(
            id: SecureRandom.hex(bytes: 20), projectID: projectID,
            clientEmail: ServiceAccountKey.clientEmail(for: projectID),
            publicKeyPEM: privateKey.publicKey.pemRepresentation, createdAt: now)
        let file = ServiceAccountKeyFile(
            projectID: projectID, keyID: key.id, privateKeyPEM: privateKey.pkcs8PEMRepresentation,
            clientEmail: key.clientEmail, clientID: String(SecureRandom.number(below: 999_999_999_999_999_999)),
            publicURL: publicURL)
        return (key, file)
    }

    /// The file's JSON text, one field a line as Google writes it.
    public var contents: String {
        let base = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        let fields: [(String, String)] = [
            ("type", "service_account"),
            ("project_id", projectID),
            ("private_key_id", keyID),
            ("private_key", privateKeyPEM.hasSuffix("\n") ? privateKeyPEM : privateKeyPEM + "\n"),
            ("client_email", clientEmail),
            ("client_id", clientID),
            ("auth_uri", "\(base)/o/oauth2/auth"),
            ("token_uri", "\(base)/token"),
            ("auth_provider_x509_cert_url", "\(base)/oauth2/v1/certs"),
            ("client_x509_cert_url", "\(base)/robot/v1/metadata/x509/\(clientEmail.replacing("@", with: "%40"))"),
            ("universe_domain", "googleapis.com"),
        ]
        var text = "{\n"
        for (index, field) in fields.enumerated() {
            text += "  "
            JSONValue.renderString(field.0, into: &text)
            text += ": "
            JSONValue.renderString(field.1, into: &text)
            text += index + 1 < fields.count ? ",\n" : "\n"
        }
        return text + "}\n"
    }
}
