/// The shape of registration tokens and installation ids that Herald accepts as targets.
public enum RegistrationTokenFormat {
    /// Whether a string could be a registration token: 1 to 4096 characters of
    /// `[A-Za-z0-9_:.-]`. A well-formed token that no device holds is `UNREGISTERED`.
    public static func isWellFormed(_ token: String) -> Bool {
        let utf8 = token.utf8
        guard !utf8.isEmpty, utf8.count <= 4096 else { return false }
        return utf8.allSatisfy { Base64URL.isAlphabet($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }
    }

    /// Whether a string could be a Firebase installation id: 1 to 200 URL-safe base64 characters.
    public static func isWellFormedInstallationID(_ fid: String) -> Bool {
        let utf8 = fid.utf8
        return !utf8.isEmpty && utf8.count <= 200 && utf8.allSatisfy(Base64URL.isAlphabet)
    }
}
