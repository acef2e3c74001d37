public import HeraldCore

/// Projects' credentials for Apple's push service (APNs): at most one of each kind a
/// project. Changing one moves the credentials revision, so every node reloads.
public protocol APNsCredentialStore: Sendable {
    /// Adds a credential, replacing the project's credential of the same kind. Throws
    /// `StoreError.notFound` for an unknown project.
    func setAPNsCredential(_ credential: APNsCredential) async throws

    /// A project's credentials, token-based first.
    func apnsCredentials(projectID: String) async throws -> [APNsCredential]

    /// Removes a project's credential of `kind`; false when it has none.
    func removeAPNsCredential(projectID: String, kind: APNsCredential.Kind) async throws -> Bool
}

/// The columns a credential is stored in, the same for every SQL backend.
struct APNsCredentialRow {
    var kind: String
    var keyID: String
    var teamID: String
    var secret: [UInt8]
    var password: String?

    init(_ credential: APNsCredential) {
        kind = credential.kind.rawValue
        switch credential.secret {
        case .signingKey(let keyID, let teamID, let pem):
            (self.keyID, self.teamID, secret, password) = (keyID, teamID, Array(pem.utf8), nil)
        case .certificate(let bytes, let password):
            (keyID, teamID, secret, self.password) = ("", "", bytes, password)
        }
    }

    init(kind: String, keyID: String, teamID: String, secret: [UInt8], password: String?) {
        (self.kind, self.keyID, self.teamID, self.secret, self.password) = (kind, keyID, teamID, secret, password)
    }

    /// The credential these columns hold, with the row's other columns; nil for an unknown kind.
    func credential(projectID: String, bundleID: String, environment: String, createdAt: Timestamp)
        -> APNsCredential?
    {
        guard let environment = APNsCredential.Environment(rawValue: environment) else { return nil }
        let secret: APNsCredential.Secret
        switch APNsCredential.Kind(rawValue: kind) {
        case .token:
            secret = .signingKey(
                keyID: keyID, teamID: teamID, privateKeyPEM: String(decoding: self.secret, as: UTF8.self))
        case .certificate:
            secret = .certificate(bytes: self.secret, password: password)
        case nil:
            return nil
        }
        return APNsCredential(
            projectID: projectID, secret: secret, bundleID: bundleID, environment: environment, createdAt: createdAt)
    }
}
