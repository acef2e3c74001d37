public import HeraldCore

/// Projects' application server key pairs for the hand-off to browsers' push services
/// (SEMANTICS W1): one a project, kept once made.
public protocol WebPushKeyStore: Sendable {
    /// The project's key pair, if it has one.
    func webPushKey(projectID: String) async throws -> WebPushKey?

    /// Keeps `key` as its project's key pair unless the project has one already; answers the
    /// one kept, so that two nodes making one at once agree. Throws `StoreError.notFound` for
    /// an unknown project.
    func keepWebPushKey(_ key: WebPushKey) async throws -> WebPushKey
}
