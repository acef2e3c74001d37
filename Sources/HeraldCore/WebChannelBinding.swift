/// Whether a project may build a web registration on a browser's push channel (a
/// `webChannel` token from `register3`), so that the project's sends ride that channel.
///
/// A channel is made for one sender: a project's sender id, a site's own VAPID key,
/// Firebase's default web key, or no key at all. A channel restricted to a site key is
/// reachable only with that key, so only a project that holds the key (its
/// `web-push-keys`, as FCM's web push certificates) may bind it; a channel made for a
/// sender id binds only to that project; one made for Firebase's default key or for no
/// key binds to one project, the first. The device that owns the channel may bind it
/// anywhere: it proves that with its check-in credentials.
public enum WebChannelBinding {
    /// The VAPID key Firebase's web SDK subscribes with when a site names none of its own.
    public static let firebaseDefaultKey =
        "BDOU99-h67HcA6JeFXHbSNMu7e2yNNu3RzoMj8TM4W88jITfq7ZmPvIM1Iv-4_l2LxQcYwhqby2xGpWwzjfAnG4"

    /// Why a binding is refused.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// The channel was made for another project's sender id.
        case otherSender
        /// The channel is restricted to a site key the project does not hold.
        case siteKeyNotHeld
        /// The request's `applicationPubKey` is not the key the channel was made for.
        case keyMismatch
        /// The channel already carries another project's registrations.
        case boundElsewhere

        public var description: String {
            switch self {
            case .otherSender: "The push channel was made for another sender."
            case .siteKeyNotHeld:
                "The push channel is restricted to a Web Push key this project does not hold (web-push-keys)."
            case .keyMismatch: "applicationPubKey is not the key the push channel was made for."
            case .boundElsewhere: "The push channel belongs to another project."
            }
        }
    }

    /// Nil when `project` may bind a channel made for `channelSender`; otherwise why not.
    /// `applicationPubKey` is the key the request names (empty or nil: Firebase's default),
    /// `ownerProven` whether it carries the channel's device credentials, and
    /// `boundProjects` the projects whose live registrations the channel carries now.
    public static func refusal(
        channelSender: String, project: Project, applicationPubKey: String?, ownerProven: Bool,
        boundProjects: Set<String>
    ) -> Refusal? {
        if ownerProven { return nil }
        if let key = applicationPubKey, !key.isEmpty, key != channelSender { return .keyMismatch }
        if let number = Int64(channelSender) { return number == project.number ? nil : .otherSender }
        if isPublicKey(channelSender) && channelSender != firebaseDefaultKey {
            return project.settings.webPushKeys.contains(channelSender) ? nil : .siteKeyNotHeld
        }
        return boundProjects.subtracting([project.id]).isEmpty ? nil : .boundElsewhere
    }

    /// Whether `text` reads as an uncompressed P-256 public key in base64url.
    public static func isPublicKey(_ text: String) -> Bool {
        publicKey(text) != nil
    }

    /// The key a sender (or any base64url text) names, when it reads as an uncompressed
    /// P-256 public key (65 bytes, 0x04 first): a channel's application server key.
    public static func publicKey(_ text: String) -> [UInt8]? {
        guard let bytes = Base64URL.decode(text), bytes.count == 65, bytes.first == 0x04 else { return nil }
        return bytes
    }
}
