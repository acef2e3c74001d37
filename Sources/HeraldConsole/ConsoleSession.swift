/// What a signed-in browser's session holds: who signed in, and the token every form it
/// posts must carry (a cross-site page cannot read it, so cannot forge a form).
public struct ConsoleSession: Codable, Sendable, Equatable {
    public var user: String
    public var csrfToken: String

    public init(user: String, csrfToken: String) {
        self.user = user
        self.csrfToken = csrfToken
    }
}
