public import HeraldCore

/// Projects' credentials for other push services: APNs (`APNsCredentialStore`), Google's FCM
/// (`FCMRelayCredentialStore`) and browsers' push services (`WebPushKeyStore`).
extension InMemoryStore {
    public func setAPNsCredential(_ credential: APNsCredential) throws {
        guard projectsByID[credential.projectID] != nil else { throw StoreError.notFound("project") }
        apnsCredentialsByProject[credential.projectID, default: [:]][credential.kind] = credential
        revision += 1
    }

    public func apnsCredentials(projectID: String) -> [APNsCredential] {
        APNsCredential.Kind.allCases.compactMap { apnsCredentialsByProject[projectID]?[$0] }
    }

    public func removeAPNsCredential(projectID: String, kind: APNsCredential.Kind) -> Bool {
        guard apnsCredentialsByProject[projectID]?.removeValue(forKey: kind) != nil else { return false }
        revision += 1
        return true
    }

    public func setFCMRelayCredential(_ credential: FCMRelayCredential) throws {
        guard projectsByID[credential.projectID] != nil else { throw StoreError.notFound("project") }
        fcmRelayCredentialsByProject[credential.projectID] = credential
        revision += 1
    }

    public func fcmRelayCredential(projectID: String) -> FCMRelayCredential? {
        fcmRelayCredentialsByProject[projectID]
    }

    public func removeFCMRelayCredential(projectID: String) -> Bool {
        guard fcmRelayCredentialsByProject.removeValue(forKey: projectID) != nil else { return false }
        revision += 1
        return true
    }

    public func webPushKey(projectID: String) -> WebPushKey? {
        webPushKeysByProject[projectID]
    }

    public func keepWebPushKey(_ key: WebPushKey) throws -> WebPushKey {
        guard projectsByID[key.projectID] != nil else { throw StoreError.notFound("project") }
        if let kept = webPushKeysByProject[key.projectID] { return kept }
        webPushKeysByProject[key.projectID] = key
        return key
    }
}
