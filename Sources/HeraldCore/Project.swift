/// An FCM project: the unit that owns credentials, devices and quotas.
public struct Project: Sendable, Hashable, Codable {
    /// The project id that names it in every v1 URL (SEMANTICS C1).
    public var id: String
    /// The project number, also its sender id (SEMANTICS C3).
    public var number: Int64
    /// The public API key client endpoints present (`x-goog-api-key`).
    public var apiKey: String
    /// The legacy server key (`Authorization: key=…`, SEMANTICS C5).
    public var serverKey: String
    /// When it was created.
    public var createdAt: Timestamp
    /// Its limits and quotas.
    public var settings: ProjectSettings

    public init(
        id: String, number: Int64, apiKey: String, serverKey: String, createdAt: Timestamp,
        settings: ProjectSettings = ProjectSettings()
    ) {
        self.id = id
        self.number = number
        self.apiKey = apiKey
        self.serverKey = serverKey
        self.createdAt = createdAt
        self.settings = settings
    }

    /// Whether a string is an acceptable project id: 4 to 63 of `[a-z0-9-]`, starting with a letter.
    public static func isValidID(_ id: String) -> Bool {
        let utf8 = Array(id.utf8)
        guard (4...63).contains(utf8.count), let first = utf8.first,
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first), utf8.last != UInt8(ascii: "-")
        else { return false }
        return utf8.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                || $0 == UInt8(ascii: "-")
        }
    }

    /// Makes a project with new random keys and a random 12-digit number.
    public static func make(id: String, createdAt: Timestamp) -> Project {
        Project(
            id: id,
            number: 100_000_000_000 + SecureRandom.number(below: 899_999_999_999),
            apiKey: "AIza" + SecureRandom.token(bytes: 27),
            serverKey: "AAAA" + SecureRandom.token(bytes: 105),
            createdAt: createdAt)
    }
}

/// A service-account key: its public half, which signs token requests for one project.
public struct ServiceAccountKey: Sendable, Hashable, Codable {
    /// The key id (`private_key_id` in the key file, `kid` in JWT headers): 40 hex digits.
    public var id: String
    /// The project it belongs to.
    public var projectID: String
    /// The service account's email (`client_email`, the JWT `iss`).
    public var clientEmail: String
    /// The RSA public key in PEM (SubjectPublicKeyInfo).
    public var publicKeyPEM: String
    /// When it was created.
    public var createdAt: Timestamp
    /// When it was revoked; a revoked key signs nothing.
    public var revokedAt: Timestamp?

    public init(
        id: String, projectID: String, clientEmail: String, publicKeyPEM: String, createdAt: Timestamp,
        revokedAt: Timestamp? = nil
    ) {
        self.id = id
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.publicKeyPEM = publicKeyPEM
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }

    /// Whether the key may sign.
    public var isActive: Bool { revokedAt == nil }

    /// The service account email Herald gives a project.
    public static func clientEmail(for projectID: String) -> String {
        "herald-adminsdk@\(projectID).iam.herald.local"
    }
}
