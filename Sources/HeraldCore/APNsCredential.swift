/// A project's credential for Apple's push service (APNs), with which Herald hands its
/// Apple app instances' messages to Apple: token-based (a `.p8` signing key) or
/// certificate-based (a client certificate). A project holds at most one of each.
public struct APNsCredential: Sendable, Hashable {
    /// Which of Apple's environments the credential is for.
    public enum Environment: String, Sendable, Hashable, CaseIterable {
        case production, development, both

        /// Whether it serves app instances registered for `environment` (production or development).
        public func serves(_ environment: Environment) -> Bool {
            self == .both || self == environment
        }
    }

    /// Which kind a credential is; a project has at most one of each.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case token, certificate
    }

    /// What Herald signs or connects with: never shown, never logged.
    public enum Secret: Sendable, Hashable {
        /// A signing key (PKCS#8 PEM of a P-256 key, as Apple hands out `.p8` files), its key
        /// id and the team id, for provider tokens (ES256 JWTs).
        case signingKey(keyID: String, teamID: String, privateKeyPEM: String)
        /// A client certificate with its private key: PEM, or PKCS#12 with its password.
        case certificate(bytes: [UInt8], password: String?)
    }

    public var projectID: String
    public var secret: Secret
    /// The app's bundle id: the `apns-topic` of its notifications.
    public var bundleID: String
    public var environment: Environment
    public var createdAt: Timestamp

    public init(
        projectID: String, secret: Secret, bundleID: String, environment: Environment, createdAt: Timestamp
    ) {
        self.projectID = projectID
        self.secret = secret
        self.bundleID = bundleID
        self.environment = environment
        self.createdAt = createdAt
    }

    public var kind: Kind {
        switch secret {
        case .signingKey: .token
        case .certificate: .certificate
        }
    }

    /// What may be shown of it: its kind, ids, bundle id and environment, never the key.
    public var summary: String {
        switch secret {
        case .signingKey(let keyID, let teamID, _):
            "token: key \(keyID), team \(teamID), bundle \(bundleID), \(environment.rawValue)"
        case .certificate(_, let password):
            "certificate: \(password == nil ? "PEM" : "PKCS#12"), bundle \(bundleID), \(environment.rawValue)"
        }
    }

    /// Whether `text` has the form of Apple's key and team ids: 10 upper-case letters and digits.
    public static func isAppleID(_ text: String) -> Bool {
        text.utf8.count == 10
            && text.utf8.allSatisfy {
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
            }
    }

    /// Whether `text` is a bundle id: 1 to 155 of letters, digits, `.` and `-`, not
    /// starting or ending with a dot.
    public static func isBundleID(_ text: String) -> Bool {
        guard (1...155).contains(text.utf8.count), text.first != ".", text.last != "." else { return false }
        return text.utf8.allSatisfy {
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: ".")
                || $0 == UInt8(ascii: "-")
        }
    }
}
