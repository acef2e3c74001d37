import HeraldCore
import HeraldStorage

/// A project with one device and one app registration on it, made in a test's own store.
struct AppInstance {
    let project: Project
    let device: Device
    let token: String

    /// Stores `project` (with a service-account key), a device and its registration for `appID`.
    static func make(in store: any HeraldStore, project: Project, appID: String, at now: Timestamp) async throws
        -> AppInstance
    {
        try await store.createProject(
            project,
            firstKey: ServiceAccountKey(
                id: "k", projectID: project.id, clientEmail: "e", publicKeyPEM: "p", createdAt: now))
        let device = Device.make(at: now)
        try await store.createDevice(device)
        let token = Registration.makeToken()
        try await store.createRegistration(
            Registration(
                token: token, kind: .app, projectID: project.id, sender: String(project.number), appID: appID,
                subtype: nil, platform: .android, androidID: device.androidID, createdAt: now))
        return AppInstance(project: project, device: device, token: token)
    }
}
