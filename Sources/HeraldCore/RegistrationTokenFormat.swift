/// The shape of registration tokens and installation ids that Herald accepts as targets.
///
/// A token is well-formed when it has the shape FCM's tokens take (and Herald's own):
/// an optional instance id of 1 to 64 URL-safe base64 characters and a colon, then
/// `APA91b` and at least one more URL-safe base64 character, at most 4,096 characters in
/// all. `fGw0qy4TGgk:APA91bGtWG…` (an app instance's token), `APA91bH…` (a GCM-era token or
/// a device group's notification key) are well-formed; `not-a-token`, `INVALID_TOKEN` and
/// the empty string are not. A malformed token is `INVALID_ARGUMENT`; a well-formed one
/// that no app instance holds is `UNREGISTERED`.
public enum RegistrationTokenFormat {
    /// What follows the instance id in every token.
    static let marker = Array("APA91b".utf8)

    /// Whether a string has the shape of a registration token (see the type's summary).
    public static func isWellFormed(_ token: String) -> Bool {
        // Read in place: this runs for every send to a token.
        let utf8 = token.utf8
        guard utf8.count <= 4096 else { return false }
        var body = utf8[...]
        if let colon = utf8.firstIndex(of: UInt8(ascii: ":")) {
            let instanceID = utf8[..<colon]
            guard (1...64).contains(instanceID.count), instanceID.allSatisfy(Base64URL.isAlphabet) else { return false }
            body = utf8[utf8.index(after: colon)...]
        }
        return body.count > marker.count && body.starts(with: marker) && body.allSatisfy(Base64URL.isAlphabet)
    }

    /// Whether a string could be a Firebase installation id: 1 to 200 URL-safe base64 characters.
    public static func isWellFormedInstallationID(_ fid: String) -> Bool {
        let utf8 = fid.utf8
        return !utf8.isEmpty && utf8.count <= 200 && utf8.allSatisfy(Base64URL.isAlphabet)
    }
}
