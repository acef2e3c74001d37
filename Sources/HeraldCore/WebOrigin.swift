/// The origin of a URL (`scheme://host[:port]`), as audiences of JWTs name Herald.
public enum WebOrigin {
    /// `scheme://host[:port]` of `url`, without its path or a trailing slash; a text without
    /// a scheme is answered without its trailing slashes.
    public static func of(_ url: String) -> String {
        guard let schemeEnd = url.firstRange(of: "://") else {
            return String(url.reversed().drop { $0 == "/" }.reversed())
        }
        return String(url[..<schemeEnd.upperBound]) + String(url[schemeEnd.upperBound...].prefix { $0 != "/" })
    }
}
