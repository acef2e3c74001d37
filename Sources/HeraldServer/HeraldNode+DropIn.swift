import HeraldCore
import HeraldGateway
import HeraldHTTP
import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
import NIOSSL

extension HeraldNode {
    /// Drop-in mode's listener: HTTPS with HTTP/2 and HTTP/1.1 (ALPN `h2`, `http/1.1`) under
    /// the drop-in certificate, every HTTP surface served only under the host names whose
    /// clients use it (`DropInHosts`).
    func makeDropInApplication(_ listener: ServerConfiguration.DropInListener) throws -> some ApplicationProtocol {
        let certificates = try DropInCertificates.loadOrCreate(
            dataDirectory: configuration.dataDirectory, hostnames: listener.hostnames, mozilla: mozillaPush != nil)
        let tls = try GatewayCertificates.serverConfiguration(
            certificateChain: certificates.certificatePath, privateKey: certificates.keyPath)
        let logger = logger
        return Application(
            router: router(
                dropIn: DropInHosts(ownHostNames: listener.hostnames), https: true, listenerHost: listener.host),
            server: try dropInServer(tls: tls),
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

    /// HTTPS with HTTP/2, and on the same port devices' MCS connections and Firefox's push
    /// connections, told apart by the TLS server name (`DropInChildChannel`).
    private func dropInServer(tls: TLSConfiguration) throws -> HTTPServerBuilder {
        let deviceTLS = try NIOSSLContext(configuration: tls)
        let streams = HTTP2UpgradeChannel.Configuration(
            streamConfiguration: .init(additionalChannelHandlers: requestHandlers()))
        let gateway = gateway
        let admission = admission
        let mozillaPush = mozillaPush
        return HTTPServerBuilder { responder in
            DropInChildChannel(
                http: try HTTP2UpgradeChannel(tlsConfiguration: tls, configuration: streams, responder: responder),
                gateway: gateway, deviceTLS: deviceTLS, mozillaPush: mozillaPush, admission: admission)
        }
    }
}
