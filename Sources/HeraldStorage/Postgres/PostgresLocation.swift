import Foundation

extension PostgresStore {
    /// Where the database is, from a URL as libpq takes it: `postgres://user:password@host:port/database`,
    /// or several hosts (`…@h1:5432,h2:5433/database?target_session_attrs=read-write`), of
    /// which the store uses the one that is the writable primary (`PostgresPrimary`).
    public struct Location: Sendable, Equatable {
        /// One of the database's servers.
        public struct Host: Sendable, Equatable, CustomStringConvertible {
            public var name: String
            public var port: Int

            public init(name: String, port: Int) {
                self.name = name
                self.port = port
            }

            public var description: String { name.contains(":") ? "[\(name)]:\(port)" : "\(name):\(port)" }
        }

        public var hosts: [Host]
        public var user: String
        public var password: String?
        public var database: String
        /// `sslmode=require` in the URL: connect with TLS and check the server's certificate.
        public var requireTLS: Bool

        /// Parses a `postgres://` or `postgresql://` URL; the password may instead come from
        /// `PGPASSWORD`. Nil when it is not such a URL.
        public init?(url: String) {
            self.init(url: url, environment: ProcessInfo.processInfo.environment)
        }

        init?(url: String, environment: [String: String]) {
            guard let separator = url.range(of: "://") else { return nil }
            let scheme = url[..<separator.lowerBound]
            guard scheme == "postgres" || scheme == "postgresql" else { return nil }
            let rest = url[separator.upperBound...]
            let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            let at = authority.lastIndex(of: "@")
            let userInfo = at.map { authority[..<$0] }
            let hostList = at.map { authority[authority.index(after: $0)...] } ?? authority
            var hosts: [Host] = []
            for part in hostList.split(separator: ",", omittingEmptySubsequences: false) {
                guard let host = Self.host(part) else { return nil }
                hosts.append(host)
            }
            // The rest of the URL, with one host in place of the list, is an ordinary URL.
            guard !hosts.isEmpty,
                let components = URLComponents(
                    string: "postgres://\(userInfo.map { "\($0)@" } ?? "")host\(rest[authorityEnd...])")
            else { return nil }
            self.hosts = hosts
            user = components.user ?? environment["PGUSER"] ?? "postgres"
            password = components.password ?? environment["PGPASSWORD"]
            let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
            database = path.isEmpty ? user : path
            requireTLS = components.queryItems?.contains { $0.name == "sslmode" && $0.value == "require" } ?? false
        }

        /// `host`, `host:port`, `[v6]` or `[v6]:port`.
        static func host(_ text: Substring) -> Host? {
            var name = text
            var port: Substring?
            if text.hasPrefix("[") {
                guard let close = text.firstIndex(of: "]") else { return nil }
                name = text[text.index(after: text.startIndex)..<close]
                let after = text[text.index(after: close)...]
                if !after.isEmpty {
                    guard after.hasPrefix(":") else { return nil }
                    port = after.dropFirst()
                }
            } else if let colon = text.lastIndex(of: ":") {
                name = text[..<colon]
                port = text[text.index(after: colon)...]
            }
            guard !name.isEmpty, !name.contains(where: { $0 == "/" || $0 == "@" || $0.isWhitespace }) else {
                return nil
            }
            guard let port else { return Host(name: String(name), port: 5432) }
            guard let number = Int(port), (1...65_535).contains(number) else { return nil }
            return Host(name: String(name), port: number)
        }

        /// The URL without its password, for logs.
        public var redacted: String {
            "postgres://\(user)@\(hosts.map(\.description).joined(separator: ","))/\(database)"
        }
    }
}
