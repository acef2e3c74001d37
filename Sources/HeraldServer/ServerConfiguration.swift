import Foundation
public import HeraldCore
public import HeraldDelivery
public import HeraldGateway
public import HeraldHTTP
public import HeraldHandOffs
public import HeraldWebhooks
public import HeraldXMPP

/// How `herald serve` runs; every field has the default written in its comment.
public struct ServerConfiguration: Sendable {
    /// Where the embedded store and generated secrets live. Default `./herald-data`.
    public var dataDirectory: String = "./herald-data"
    /// A `postgres://` URL: the shared store several nodes use; nil for embedded SQLite.
    public var storeURL: String?
    /// This node's name among the nodes sharing a store; stable across restarts, so that a
    /// restarted node takes back what it held. `herald serve` without `--node-id` derives one
    /// (`NodeIdentity.stable`). A node refuses to start while a live node holds its id.
    public var nodeID: String = "node-1"
    /// Connections to PostgreSQL per node.
    public var databaseConnections: Int = 20
    /// Heartbeats, signals and quota exchange between nodes.
    public var cluster = ClusterService.Timing()
    /// The HTTP listen address. Default `127.0.0.1`.
    public var httpHost: String = "127.0.0.1"
    /// What one address or checked-in device may ask of the unauthenticated device endpoints
    /// per minute (defaults in `DeviceRequestLimiter.Limits`).
    public var deviceRequestLimits = DeviceRequestLimiter.Limits()
    /// Connections not yet authenticated, per source address and in all, on every listener
    /// (defaults in `ConnectionAdmission.Limits`; `herald serve` sets the total to half its
    /// open-files limit).
    public var connectionAdmission = ConnectionAdmission.Limits()
    /// A device that checked in but never registered nor connected is removed after this
    /// many seconds. Default 86,400 (a day).
    public var abandonedCheckinSeconds: Int64 = 86_400
    /// Days events are kept: the status API, the event stream and export reach back this
    /// far (SEMANTICS E4). Default 31.
    public var eventRetentionDays = 31
    /// A bearer token `GET /metrics` requires. Default none: metrics are closed unless
    /// `metricsWithoutToken` opens them on loopback listeners.
    public var metricsToken: String?
    /// Whether listeners bound to loopback serve `GET /metrics` without a token. Default
    /// false: a proxy on the same host connects from loopback for whoever is behind it.
    public var metricsWithoutToken = false
    /// The HTTP port; 0 picks a free one. Default 8080.
    public var httpPort: Int = 8080
    /// The URL clients reach this server at (behind a proxy, say), which key files must
    /// name as their `token_uri` base; logged at start. Default `http://<httpHost>:<httpPort>`.
    public var publicURL: String?
    /// Further origins a Web Push sender's VAPID `aud` may name (besides the public URL's),
    /// for deployments that map other host names (Google's) to this server.
    public var webPushAudiences: [String] = []
    /// The browsers' push services web registrations may name (SEMANTICS W1).
    public var webPushServices = WebPushServices()
    /// The project that owns the push channels browsers and phones make over Mozilla's push
    /// protocol (Firefox, Sunup; SEMANTICS W6), served on the HTTP port (and drop-in mode's
    /// `push.services.mozilla.com`); nil: the protocol is not served.
    public var mozillaPushProject: String?
    /// Drop-in mode's HTTPS listener (FCM's host names resolved to Herald); nil for none.
    public var dropIn: DropInListener?

    /// Where drop-in mode listens, and the operator's own host names it also serves.
    public struct DropInListener: Sendable {
        public var host: String
        public var port: Int
        public var hostnames: [String]

        public init(host: String = "127.0.0.1", port: Int = 443, hostnames: [String] = []) {
            self.host = host
            self.port = port
            self.hostnames = hostnames
        }
    }

    /// Hosts webhooks may post to whatever their scheme and address (SEMANTICS E5): by
    /// default only HTTPS targets outside loopback are.
    public var webhookAllowedHosts: Set<String> = []

    /// Where webhooks may post: the operator's allowed hosts, and never Herald's own listeners.
    public var webhookTargets: WebhookTargetPolicy {
        var hosts: Set<String> = [httpHost, "localhost"]
        var ports = Set([httpPort] + xmpp.tlsPorts + xmpp.plaintextPorts)
        if let gateway {
            hosts.insert(gateway.host)
            ports.formUnion(gateway.ports)
        }
        if let publicURL = publicURL.flatMap(URL.init(string:)), let host = publicURL.host {
            hosts.insert(host)
            ports.insert(publicURL.port ?? (publicURL.scheme == "https" ? 443 : 80))
        }
        if let dropIn {
            hosts.formUnion([dropIn.host] + dropIn.hostnames)
            ports.insert(dropIn.port)
        }
        return WebhookTargetPolicy(allowedHosts: webhookAllowedHosts, ownHosts: hosts, ownPorts: ports)
    }

    /// The hand-offs' configuration, with the browser push services' addresses checked as
    /// webhook targets are (SEMANTICS W1).
    public var effectiveHandOffs: HandOffForwarder.Configuration {
        var handOffs = self.handOffs
        let targets = webhookTargets
        handOffs.webPushAddress = { origin in
            do throws(WebhookTargetPolicy.Refusal) {
                return try targets.check(origin).address
            } catch {
                throw HandOffForwarder.CheckRefused(reason: error.description)
            }
        }
        return handOffs
    }

    /// The public URL, or the default one.
    public var effectivePublicURL: String { publicURL ?? "http://\(httpHost):\(httpPort)" }
    /// The device gateway (MCS). Default: port 5228 on `httpHost` with generated TLS
    /// certificates in `<dataDirectory>/tls`.
    public var gateway: GatewayConfiguration?
    /// The XMPP connection server for app servers: off unless it has a port. Its TLS ports
    /// serve the gateway's certificate.
    public var xmpp = XMPPGateway.Configuration()
    /// Seconds between sweeps of expired queued messages. Default 30.
    public var sweepIntervalSeconds: Int = 30
    /// Sends worked on at once; past it a send is answered 503 `UNAVAILABLE` with
    /// `Retry-After` instead of queueing in front of the store. Default 2,048.
    public var maximumConcurrentSends: Int = 2_048
    /// Seconds an HTTP client has to send a request's head, counted from the connection
    /// opening or its previous answer; an idle keep-alive connection is closed after as
    /// long. Default 60.
    public var httpHeadTimeoutSeconds: Double = 60
    /// Seconds an HTTP client has to send a request's body once its head is in. Default 60.
    public var httpBodyTimeoutSeconds: Double = 60
    /// How long a stopping node's health check fails before it stops accepting requests
    /// and devices (`DrainService`): behind a balancer, longer than its check interval.
    public var drainSeconds: Double = 0
    /// How long a message to one device connected here waits for the device's
    /// acknowledgement before its queue row is written (nil: written at once). A message
    /// acknowledged meanwhile gets no row, so the row is not written only to be deleted;
    /// the sender's answer still waits for the message's own record. Default:
    /// `Dispatcher.defaultAcknowledgementWait`.
    public var acknowledgementWait: DeliveryPath.Settle? = Dispatcher.defaultAcknowledgementWait
    /// Where messages are handed to APNs and FCM, and the extra CAs trusted for it.
    /// Default: Apple's and Google's hosts and the system's CAs.
    public var handOffs = HandOffForwarder.Configuration()

    public init() {}

    /// The gateway settings in force: the configured ones, or the defaults for this data directory.
    public var effectiveGateway: GatewayConfiguration {
        if let gateway { return gateway }
        var gateway = GatewayConfiguration()
        gateway.host = httpHost
        gateway.security = .generated(dataDirectory: dataDirectory, hostnames: [httpHost])
        return gateway
    }
}
