import ArgumentParser
import Foundation
import HeraldCore
import HeraldDelivery
import HeraldGateway
import HeraldHTTP
import HeraldHandOffs
import HeraldServer
import HeraldStorage
import Logging

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run Herald: the HTTP APIs on one port.")

    @OptionGroup var storeOptions: StoreOptions

    @Option(name: .customLong("http-host"), help: "The address the HTTP API listens on.")
    var httpHost = "127.0.0.1"

    @Option(name: .customLong("http-port"), help: "The HTTP port (0 picks a free one).")
    var httpPort = 8080

    @Option(name: .customLong("public-url"), help: "The URL clients reach Herald at (default http://HOST:PORT).")
    var publicURL: String?

    @Option(
        name: .customLong("web-push-audience"),
        help: "Another origin Web Push senders' VAPID aud may name, such as https://fcm.googleapis.com (repeatable).")
    var webPushAudiences: [String] = []
    @Flag(
        name: .customLong("drop-in"),
        help:
            "Also serve HTTPS (HTTP/2 and HTTP/1.1) under FCM's own host names, and XMPP on 5235 unless --xmpp-port says otherwise (see herald drop-in)."
    )
    var dropIn = false
    @Option(name: .customLong("drop-in-port"), help: "The drop-in HTTPS port.") var dropInPort = 443
    @Option(name: .customLong("drop-in-host"), help: "The drop-in listener's address (default: --http-host).")
    var dropInHost: String?
    @Option(
        name: .customLong("drop-in-hostname"),
        help: "One of your own host names the drop-in listener also serves everything under (repeatable).")
    var dropInHostnames: [String] = []

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    @Option(name: .customLong("gateway-host"), help: "The device gateway's listen address (default: --http-host).")
    var gatewayHost: String?

    @Option(name: .customLong("gateway-port"), help: "The device gateway (MCS) port (0 picks a free one).")
    var gatewayPort = 5228

    @Option(
        name: .customLong("gateway-extra-port"),
        help: "A further gateway port, e.g. 443, 5229 or 5230 for restrictive networks (repeatable).")
    var gatewayExtraPorts: [Int] = []

    @Flag(name: .customLong("gateway-plaintext"), help: "No TLS on the gateway, behind a TLS-terminating balancer.")
    var gatewayPlaintext = false

    @Option(name: .customLong("tls-cert"), help: "PEM certificate chain for the gateway (default: generated).")
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: "PEM private key for --tls-cert.")
    var tlsKey: String?

    @Option(name: .customLong("tls-hostname"), help: "A name the generated certificate is valid for (repeatable).")
    var tlsHostnames: [String] = []

    @Option(
        name: .customLong("node-id"),
        help: """
            This node's name among nodes sharing a --store (env HERALD_NODE_ID). Default: the host's name \
            and a random suffix, kept in <data-dir>/node-id.
            """)
    var nodeID = ProcessInfo.processInfo.environment["HERALD_NODE_ID"]

    @Option(
        name: .customLong("checkins-per-minute"),
        help: "New devices one address may check in per minute (0: no limit).")
    var checkinsPerMinute = DeviceRequestLimiter.Limits().checkinsPerAddress

    @Option(
        name: .customLong("registrations-per-minute"),
        help: "Registrations (register3, installations, web) one address may make per minute (0: no limit).")
    var registrationsPerMinute = DeviceRequestLimiter.Limits().registrationsPerAddress

    @Option(
        name: .customLong("device-registrations-per-minute"),
        help: "register3 requests one checked-in device may make per minute (0: no limit).")
    var deviceRegistrationsPerMinute = DeviceRequestLimiter.Limits().registrationsPerDevice

    @Option(
        name: .customLong("imports-per-minute"),
        help: "APNs tokens one project may import (batchImport) per minute (0: no limit).")
    var importsPerMinute = DeviceRequestLimiter.Limits().importsPerProject

    @Option(
        name: .customLong("abandoned-checkin-hours"),
        help: "Hours after which a device that never registered nor connected is removed.")
    var abandonedCheckinHours = 24

    @Option(
        name: .customLong("allow-webhook-host"),
        help: """
            A host webhooks may post to over http:// or at any address, or an address range (10.1.0.0/16) \
            https:// targets may be in (repeat for several). Web Push services' endpoints are checked the same way.
            """)
    var allowedWebhookHosts: [String] = []

    @Option(
        name: .customLong("web-push-service"),
        help: """
            A browser push service web registrations may name besides Google's, Mozilla's, Apple's and \
            Microsoft's: a host, or *.domain for every host under it (repeatable; docs/guide/web-push.md).
            """)
    var webPushServices: [String] = []

    @Option(
        name: .customLong("mozilla-push-project"),
        help: """
            Serve Mozilla's push protocol (Firefox, UnifiedPush's Sunup) on the HTTP port, its channels \
            owned by this project (docs/guide/web-push.md).
            """)
    var mozillaPushProject: String?

    @Option(
        name: .customLong("web-push-contact"),
        help: "The contact (mailto: or https: URL) the VAPID JWTs of Web Push hand-offs name.")
    var webPushContact = HandOffForwarder.Configuration.defaultWebPushContact

    @Option(
        name: .customLong("event-retention-days"),
        help: "Days message events are kept for the status API, the event stream and export.")
    var eventRetentionDays = 31

    @Option(
        name: .customLong("metrics-token"),
        help: """
            A bearer token GET /metrics requires (env HERALD_METRICS_TOKEN). Without one, metrics are not \
            served unless --metrics-without-token.
            """)
    var metricsToken = ProcessInfo.processInfo.environment["HERALD_METRICS_TOKEN"]

    @Flag(
        name: .customLong("metrics-without-token"),
        help: """
            Serve GET /metrics without a token on listeners bound to loopback. Not behind a proxy on \
            the same host: it connects from loopback for everyone.
            """)
    var metricsWithoutToken = false

    @Option(name: .customLong("database-connections"), help: "Connections to PostgreSQL from this node.")
    var databaseConnections = 20

    @Option(
        name: .customLong("drain-seconds"),
        help:
            "On SIGTERM, how long /healthz answers 503 (draining) before the node stops accepting: behind a balancer, longer than its health-check interval."
    )
    var drainSeconds = 0.0

    @Option(name: .customLong("heartbeat-seconds"), help: "Seconds between gateway heartbeats on idle connections.")
    var heartbeatSeconds = 240

    @Option(
        name: .customLong("http-head-timeout"),
        help: "Seconds a client has to send a request's head (and an idle connection stays open).")
    var httpHeadTimeout = 60.0

    @Option(name: .customLong("http-body-timeout"), help: "Seconds a client has to send a request's body.")
    var httpBodyTimeout = 60.0

    @Option(name: .customLong("login-timeout"), help: "Seconds a device connection has to log in.")
    var loginTimeout = 10
    @Option(
        name: .customLong("unauthenticated-connections-per-address"),
        help: "Connections one address may hold open before they authenticate, on every listener (0: no limit).")
    var unauthenticatedPerAddress = ConnectionAdmission.Limits().perAddress
    @Option(
        name: .customLong("authenticated-connections-per-address"),
        help: "Logged-in device and app-server connections one address may hold, on every listener (0: no limit).")
    var authenticatedPerAddress = ConnectionAdmission.Limits().authenticatedPerAddress
    @Option(
        name: .customLong("unauthenticated-connections"),
        help:
            "Connections held open before they authenticate, in all (default: half the open-files limit; 0: no limit)."
    )
    var unauthenticatedTotal: Int?

    @Option(
        name: .customLong("xmpp-port"),
        help: "A port for XMPP app-server connections over TLS, as FCM's 5235 (repeatable; off by default).")
    var xmppPorts: [Int] = []

    @Option(
        name: .customLong("xmpp-plaintext-port"),
        help: "A port for XMPP app-server connections without TLS, behind a TLS-terminating balancer (repeatable).")
    var xmppPlaintextPorts: [Int] = []

    @Option(
        name: .customLong("acknowledgement-wait-ms"),
        help: """
            Milliseconds a message to a connected device waits for the device's acknowledgement \
            before its queue row is written (an acknowledged message gets no row); 0 writes at once.
            """)
    var acknowledgementWaitMilliseconds = (Dispatcher.defaultAcknowledgementWait?.limit ?? .zero) / .milliseconds(1)

    @Option(name: .customLong("apns-production-url"), help: "APNs' production base URL.")
    var apnsProductionURL = HandOffForwarder.Configuration.appleProductionURL

    @Option(name: .customLong("apns-development-url"), help: "APNs' development (sandbox) base URL.")
    var apnsDevelopmentURL = HandOffForwarder.Configuration.appleDevelopmentURL

    @Option(
        name: .customLong("fcm-url"),
        help: "FCM's base URL, where messages to tokens Herald did not issue are handed off (docs/fcm-relay.md).")
    var fcmURL = HandOffForwarder.Configuration.googleFCMURL

    @Option(
        name: .customLong("outbound-ca"),
        help: "A PEM file of CA certificates to trust for outbound TLS, besides the system's (repeatable).")
    var outboundCAs: [String] = []

    func validate() throws {
        if (tlsCertificate == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together.") }
        if gatewayPlaintext && tlsCertificate != nil {
            throw ValidationError("--gateway-plaintext and --tls-cert exclude each other.")
        }
        if gatewayPlaintext && !xmppPorts.isEmpty {
            throw ValidationError("--xmpp-port serves the gateway's TLS certificate: use --xmpp-plaintext-port.")
        }
        guard httpHeadTimeout > 0, httpBodyTimeout > 0, loginTimeout > 0 else {
            throw ValidationError("Timeouts must be positive.")
        }
        guard (0...1000).contains(acknowledgementWaitMilliseconds) else {
            throw ValidationError("--acknowledgement-wait-ms must be between 0 and 1000.")
        }
        for url in [apnsProductionURL, apnsDevelopmentURL] where !url.hasPrefix("https://") {
            throw ValidationError("APNs is reached over HTTPS only: \(url) is not an https:// URL.")
        }
        guard webPushContact.hasPrefix("mailto:") || webPushContact.hasPrefix("https://") else {
            throw ValidationError("--web-push-contact must be a mailto: or https: URL.")
        }
        for file in outboundCAs where !FileManager.default.isReadableFile(atPath: file) {
            throw ValidationError("--outbound-ca \(file) cannot be read.")
        }
        guard (0...300).contains(drainSeconds) else {
            throw ValidationError("--drain-seconds must be between 0 and 300.")
        }
        guard (5...1500).contains(heartbeatSeconds) else {
            throw ValidationError("--heartbeat-seconds must be between 5 and 1500 (well inside 30 minutes).")
        }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            // Clients choose many logged values: each is escaped and shortened.
            var handler = EscapingLogHandler(wrapping: StreamLogHandler.standardError(label: label))
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "herald")
        var configuration = ServerConfiguration()
        configuration.dataDirectory = storeOptions.dataDirectory
        configuration.storeURL = storeOptions.storeURL
        if let nodeID {
            configuration.nodeID = nodeID
        } else if storeOptions.storeURL != nil {
            configuration.nodeID = try NodeIdentity.stable(dataDirectory: storeOptions.dataDirectory)
        }
        configuration.databaseConnections = databaseConnections
        configuration.httpHost = httpHost
        configuration.httpPort = httpPort
        configuration.metricsToken = metricsToken
        configuration.metricsWithoutToken = metricsWithoutToken
        configuration.deviceRequestLimits.checkinsPerAddress = checkinsPerMinute
        configuration.deviceRequestLimits.registrationsPerAddress = registrationsPerMinute
        configuration.deviceRequestLimits.registrationsPerDevice = deviceRegistrationsPerMinute
        configuration.deviceRequestLimits.importsPerProject = importsPerMinute
        configuration.abandonedCheckinSeconds = Int64(abandonedCheckinHours) * 3600
        configuration.eventRetentionDays = max(1, eventRetentionDays)
        configuration.webhookAllowedHosts = Set(allowedWebhookHosts.map { $0.lowercased() })
        configuration.publicURL = publicURL
        configuration.webPushAudiences = webPushAudiences
        configuration.handOffs = HandOffForwarder.Configuration(
            productionURL: apnsProductionURL, developmentURL: apnsDevelopmentURL, fcmURL: fcmURL,
            trustRoots: outboundCAs, webPushContact: webPushContact)
        configuration.webPushServices = WebPushServices(adding: webPushServices)
        configuration.mozillaPushProject = mozillaPushProject
        if dropIn {
            configuration.dropIn = .init(host: dropInHost ?? httpHost, port: dropInPort, hostnames: dropInHostnames)
            // Browsers report their endpoints under Google's host: VAPID tokens name it.
            configuration.webPushAudiences += ["https://fcm.googleapis.com", "https://jmt17.google.com"]
            // Channels made over Mozilla's protocol are given endpoints under Mozilla's host.
            if mozillaPushProject != nil {
                configuration.webPushAudiences += ["https://" + DropInHosts.mozillaEndpointHost]
            }
        }
        configuration.httpHeadTimeoutSeconds = httpHeadTimeout
        configuration.httpBodyTimeoutSeconds = httpBodyTimeout
        configuration.drainSeconds = drainSeconds
        configuration.acknowledgementWait = Dispatcher.acknowledgementWait(
            limit: .microseconds(Int64(acknowledgementWaitMilliseconds * 1000)))
        let openFiles = OpenFiles.raiseLimit(logger: logger)
        // Half the descriptors at most for connections that have not authenticated: the
        // rest stays for devices, app servers and the store.
        configuration.connectionAdmission = ConnectionAdmission.Limits(
            perAddress: unauthenticatedPerAddress,
            total: unauthenticatedTotal ?? openFiles.map { $0 / 2 } ?? ConnectionAdmission.Limits().total,
            authenticatedPerAddress: authenticatedPerAddress)
        var gateway = GatewayConfiguration()
        gateway.loginTimeoutSeconds = loginTimeout
        gateway.host = gatewayHost ?? httpHost
        gateway.ports = [gatewayPort] + gatewayExtraPorts
        gateway.heartbeatSeconds = heartbeatSeconds
        if gatewayPlaintext {
            gateway.security = .plaintext
        } else if let tlsCertificate, let tlsKey {
            gateway.security = .files(certificateChain: tlsCertificate, privateKey: tlsKey)
        } else {
            gateway.security = .generated(
                dataDirectory: storeOptions.dataDirectory, hostnames: [gateway.host] + tlsHostnames)
            let certificates = try GatewayCertificates.loadOrCreate(
                dataDirectory: storeOptions.dataDirectory, hostnames: [gateway.host] + tlsHostnames)
            logger.info("devices trust the gateway CA in \(certificates.caPath)")
        }
        if dropIn {
            // The same names as the drop-in listener's, so that both serve one certificate.
            gateway.dropIn = try DropInCertificates.loadOrCreate(
                dataDirectory: storeOptions.dataDirectory, hostnames: dropInHostnames,
                mozilla: mozillaPushProject != nil)
        }
        configuration.gateway = gateway
        configuration.xmpp.host = gateway.host
        // Drop-in mode serves XMPP app servers where they look for it: fcm-xmpp.googleapis.com:5235.
        configuration.xmpp.tlsPorts = xmppPorts.isEmpty && dropIn && !gatewayPlaintext ? [5235] : xmppPorts
        configuration.xmpp.plaintextPorts = xmppPlaintextPorts
        let host = httpHost
        let publicURL = publicURL
        let storeURL = storeOptions.storeURL
        try await HeraldNode.withStore(configuration, logger: logger) { backend in
            let node = try await HeraldNode(
                configuration: configuration, store: backend.store, cluster: backend.cluster,
                maintenance: backend.maintenance, logger: logger)
            if let location = storeURL.flatMap(PostgresStore.Location.init(url:)) {
                logger.info("shared store \(location.redacted), node \(configuration.nodeID)")
            } else {
                logger.info("data directory \(configuration.dataDirectory)")
            }
            try await node.run { httpPort, gatewayPorts in
                logger.info(
                    "Herald \(SemanticVersion.herald) HTTP API listening on http://\(host):\(httpPort), device gateway on \(gatewayPorts)"
                )
                // Key files must name this URL as their token_uri base (herald project create --public-url).
                logger.info("clients reach Herald at \(publicURL ?? "http://\(host):\(httpPort)")")
            }
            // Every service stopped and wrote what it held: closing the store's connections is
            // all that is left, and a connection a failed-over database never answers again
            // must not keep the process.
            DispatchQueue.global().asyncAfter(deadline: .now() + 10) {
                logger.warning("the store's connections did not close within 10 s of stopping; exiting")
                Foundation.exit(0)
            }
        }
    }
}
