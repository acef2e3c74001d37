/// A project's Google service-account key, with which Herald hands the messages for tokens
/// it did not issue to FCM (SEMANTICS R1–R6). A project holds at most one.
public struct FCMRelayCredential: Sendable, Hashable {
    /// The Herald project it serves.
    public var projectID: String
    /// The Google project the key belongs to: the hand-offs go to its `messages:send`.
    public var googleProjectID: String
    /// The service account's email: the assertions' issuer.
    public var clientEmail: String
    /// The key's id, named in the assertions' header.
    public var privateKeyID: String
    /// The RSA private key in PEM: never shown, never logged.
    public var privateKeyPEM: String
    /// Where an assertion is exchanged for an access token.
    public var tokenURI: String
    public var createdAt: Timestamp

    public init(
        projectID: String, googleProjectID: String, clientEmail: String, privateKeyID: String, privateKeyPEM: String,
        tokenURI: String, createdAt: Timestamp
    ) {
        self.projectID = projectID
        self.googleProjectID = googleProjectID
        self.clientEmail = clientEmail
        self.privateKeyID = privateKeyID
        self.privateKeyPEM = privateKeyPEM
        self.tokenURI = tokenURI
        self.createdAt = createdAt
    }

    /// What may be shown of it: the account, the Google project and the key's id, never the key.
    public var summary: String {
        "\(clientEmail) (Google project \(googleProjectID), key \(privateKeyID.prefix(8))…, token_uri \(tokenURI))"
    }
}
