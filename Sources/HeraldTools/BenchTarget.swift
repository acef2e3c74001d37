public import HeraldClient
public import NIOSSL

/// The Herald a device benchmark drives: its HTTP API, a project's credentials and API
/// key (to register devices), and its device gateway.
public struct BenchTarget: Sendable {
    public var server: HTTPURL
    public var credentials: ServiceAccountCredentials
    public var apiKey: String
    public var gatewayHost: String
    public var gatewayPort: Int
    public var tls: NIOSSLContext?

    public init(
        server: HTTPURL, credentials: ServiceAccountCredentials, apiKey: String, gatewayHost: String, gatewayPort: Int,
        tls: NIOSSLContext?
    ) {
        self.server = server
        self.credentials = credentials
        self.apiKey = apiKey
        self.gatewayHost = gatewayHost
        self.gatewayPort = gatewayPort
        self.tls = tls
    }
}
