/// A URL split into what `HTTPConnection` needs; only `http://` is supported.
public struct HTTPURL: Sendable {
    public var host: String
    public var port: Int
    public var path: String

    /// Parses `http://host[:port][/path]`; nil for anything else.
    public init?(_ text: String) {
        guard text.hasPrefix("http://") else { return nil }
        let rest = text.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" }
        path = rest.count > authority.count ? String(rest.dropFirst(authority.count)) : ""
        if let colon = authority.lastIndex(of: ":"), let port = Int(authority[authority.index(after: colon)...]) {
            host = String(authority[..<colon])
            self.port = port
        } else {
            host = String(authority)
            port = 80
        }
        guard !host.isEmpty else { return nil }
    }

    /// The whole URL, `http://host:port/path`.
    public var text: String { origin + path }

    /// `http://host:port`, without the path.
    public var origin: String { "http://\(host):\(port)" }

    /// The base URL with another path.
    public func with(path: String) -> HTTPURL {
        var copy = self
        copy.path = path
        return copy
    }
}
