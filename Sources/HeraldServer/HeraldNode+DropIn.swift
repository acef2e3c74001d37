import HeraldCore
import HeraldGateway
import HeraldHTTP
import Hummingbird
import HummingbirdHTTP2

extension HeraldNode {
    /// Drop-in mode's listener: HTTPS with HTTP/2 and HTTP/1.1 (ALPN `h2`, `http/1.1`) under
    /// the drop-in certificate, every HTTP surface served only under the host names whose
    /// clients use it (`DropInHosts`).
    func makeDropInApplication(_ listener: ServerConfiguration.DropInListener) throws -> some ApplicationProtocol {
        let certificates = try DropInCertificates.loadOrCreate(
            dataDirectory: configuration.dataDirectory, hostnames: listener.hostnames)
        let tls = try GatewayCertificates.serverConfiguration(
            certificateChain: certificates.certificatePath, privateKey: certificates.keyPath)
        let logger = logger
        return Application(
            router: HeraldRouter.make(environment, dropIn: DropInHosts(ownHostNames: listener.hostnames)),
            server: try .http2Upgrade(
                tlsConfiguration: tls,
                configuration: .init(streamConfiguration: .init(additionalChannelHandlers: requestHandlers()))),
            configuration: .init(address: .hostname(listener.host, port: listener.port), serverName: "Herald"),
            onServerRunning: { channel in
                logger.info(
                    "drop-in listener running",
                    metadata: [
                        "port": "\(channel.localAddress?.port ?? 0)", "ca": "\(certificates.caPath)",
                    ])
            },
            logger: logger)
    }
}
