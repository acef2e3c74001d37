public import HeraldCore
import _CryptoExtras

/// Reads and checks a Google service-account key file before it becomes a project's key
/// for the hand-off to FCM: JSON of `"type": "service_account"` with `project_id`,
/// `client_email`, `private_key_id`, an RSA `private_key` in PEM and an http(s) `token_uri`.
/// Nothing of the key is ever put in an error.
public enum FCMServiceAccountFile {
    /// Why an upload is refused.
    public typealias Failure = CredentialFileFailure

    /// The largest file taken: Google's key files are about 2.3 KiB.
    public static let maximumFileBytes = 64 * 1024

    /// The key for Herald's project `projectID`, read from a key file's bytes.
    public static func credential(bytes: [UInt8], projectID: String, now: Timestamp) throws(Failure)
        -> FCMRelayCredential
    {
        guard bytes.count <= maximumFileBytes else {
            throw Failure("The file is larger than 64 KiB: a service-account key file is about 2 KiB.")
        }
        guard let json = try? JSONParser.parse(bytes), json["type"]?.stringValue == "service_account" else {
            throw Failure(
                "The file is not a Google service-account key file (JSON with \"type\": \"service_account\").")
        }
        func field(_ name: String) throws(Failure) -> String {
            guard let value = json[name]?.stringValue, !value.isEmpty else {
                throw Failure("The key file has no \(name).")
            }
            return value
        }
        let googleProjectID = try field("project_id")
        // Google's project ids are lower-case letters, digits and hyphens (a domain-scoped one
        // adds `domain:`); the id goes into the hand-off's path.
        guard googleProjectID.utf8.count <= 100,
            googleProjectID.utf8.allSatisfy({
                Base64URL.isAlphabet($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".")
            })
        else { throw Failure("The key file's project_id is not a Google project id.") }
        let clientEmail = try field("client_email")
        guard clientEmail.contains("@"), !clientEmail.contains(where: \.isWhitespace) else {
            throw Failure("The key file's client_email is not an email address.")
        }
        let keyID = try field("private_key_id")
        let tokenURI = try field("token_uri")
        guard tokenURI.hasPrefix("https://") || tokenURI.hasPrefix("http://") else {
            throw Failure("The key file's token_uri is not an http(s) URL.")
        }
        let pem = try field("private_key")
        guard (try? _RSA.Signing.PrivateKey(pemRepresentation: pem)) != nil else {
            throw Failure("The key file's private_key is not an RSA private key in PEM.")
        }
        return FCMRelayCredential(
            projectID: projectID, googleProjectID: googleProjectID, clientEmail: clientEmail, privateKeyID: keyID,
            privateKeyPEM: pem, tokenURI: tokenURI, createdAt: now)
    }
}
