/// How `herald serve` runs; every field has the default written in its comment.
public struct ServerConfiguration: Sendable {
    /// Where the embedded store and generated secrets live. Default `./herald-data`.
    public var dataDirectory: String = "./herald-data"
    /// The HTTP listen address. Default `127.0.0.1`.
    public var httpHost: String = "127.0.0.1"
    /// The HTTP port; 0 picks a free one. Default 8080.
    public var httpPort: Int = 8080
    /// The URL clients reach this server at, written into key files. Default
    /// `http://<httpHost>:<httpPort>`.
    public var publicURL: String?

    public init() {}

    /// The public URL, or the one derived from the listen address.
    public var effectivePublicURL: String {
        publicURL ?? "http://\(httpHost):\(httpPort)"
    }
}
