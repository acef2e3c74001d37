/// How the device gateway listens and keeps connections alive; defaults in the comments.
public struct GatewayConfiguration: Sendable {
    /// How the gateway's TLS is set up.
    public enum Security: Sendable {
        /// A CA and server certificate generated into the data directory on first start.
        case generated(dataDirectory: String, hostnames: [String])
        /// Certificate chain and key from PEM files.
        case files(certificateChain: String, privateKey: String)
        /// No TLS, for use behind a TLS-terminating balancer.
        case plaintext
    }

    /// The listen address. Default `127.0.0.1`.
    public var host: String = "127.0.0.1"
    /// The ports to listen on; 0 picks a free one. Default 5228 (SEMANTICS N1).
    public var ports: [Int] = [5228]
    /// TLS. Default: generated certificates.
    public var security: Security = .plaintext
    /// Drop-in mode's certificate, shown instead to a device that asks for one of FCM's host
    /// names (TLS SNI `mtalk.google.com`); nil outside drop-in mode.
    public var dropIn: DropInCertificates?
    /// Seconds between heartbeats the server sends on an idle connection; clients may ask
    /// for shorter ones, down to `minimumHeartbeatSeconds`. Default 240 (N2: well inside
    /// the 30 minutes after which NATs drop idle connections).
    public var heartbeatSeconds: Int = 240
    /// The shortest heartbeat interval a client may ask for. Default 5.
    public var minimumHeartbeatSeconds: Int = 5
    /// Seconds a connection may take to log in. Default 10: a device logs in at once, and
    /// a connection that does not holds a descriptor for nothing.
    public var loginTimeoutSeconds: Int = 10
    /// Messages sent to one device and not yet acknowledged; the rest wait in its queue,
    /// so a slow device cannot make the server hold unbounded data. Default 100.
    public var maximumInFlight: Int = 100
    /// The largest frame accepted from a device. Default 64 KiB.
    public var maximumFrameBytes: Int = 64 * 1024

    public init() {}

    /// Seconds without any frame from a device after which its connection is dead.
    func deadAfterSeconds(heartbeatSeconds: Int) -> Int { heartbeatSeconds * 2 + 10 }
}
