public import HeraldCore

/// Projects' Google service-account keys for the hand-off to FCM: at most one a project.
/// Changing one moves the credentials revision, so every node reloads.
public protocol FCMRelayCredentialStore: Sendable {
    /// Sets the project's key, replacing the one it had. Throws `StoreError.notFound` for an
    /// unknown project.
    func setFCMRelayCredential(_ credential: FCMRelayCredential) async throws

    /// The project's key, if it has one.
    func fcmRelayCredential(projectID: String) async throws -> FCMRelayCredential?

    /// Removes the project's key; false when it had none.
    func removeFCMRelayCredential(projectID: String) async throws -> Bool
}
