public import HeraldCore
public import HeraldStorage

/// A project as the store tests make it.
public func sampleProject(_ id: String = "alpha-project", number: Int64 = 123_456_789_012) -> Project {
    Project(
        id: id, number: number, apiKey: "AIza-\(id)", serverKey: "AAAA-\(id)", createdAt: Timestamp(seconds: 1000))
}

/// A service-account key of a sample project.
public func sampleKey(_ id: String, project: String = "alpha-project", at seconds: Int64 = 1000) -> ServiceAccountKey {
    ServiceAccountKey(
        id: id, projectID: project, clientEmail: ServiceAccountKey.clientEmail(for: project),
        publicKeyPEM: "PEM-\(id)", createdAt: Timestamp(seconds: seconds))
}

/// A message to a topic of a sample project.
public func sampleMessage(_ id: String, project: String = "alpha-project") -> StoredMessage {
    StoredMessage(
        id: id, projectID: project, targetKind: .topic, target: "news", body: #"{"data":{"k":"v"}}"#,
        createdAt: Timestamp(seconds: 2000), expiresAt: Timestamp(seconds: 2000 + 2_419_200))
}

/// A live app registration of `projectID` on a new device; answers its token.
public func registeredToken(_ store: any HeraldStore, projectID: String, deleted: Bool = false) async throws -> String {
    let device = Device.make(at: Timestamp(milliseconds: 0))
    try await store.createDevice(device)
    let registration = Registration(
        token: Registration.makeToken(), kind: .app, projectID: projectID, sender: "1", appID: "com.example.app",
        subtype: nil, platform: .android, androidID: device.androidID, createdAt: Timestamp(milliseconds: 0),
        deletedAt: deleted ? Timestamp(milliseconds: 1) : nil)
    try await store.createRegistration(registration)
    return registration.token
}
