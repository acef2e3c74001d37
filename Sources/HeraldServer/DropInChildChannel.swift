import HeraldCore
import HeraldGateway
import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOSSL
import NIOTLS

/// A connection to drop-in mode's port 443, which serves both HTTPS and devices falling back
/// from port 5228: the server name in the TLS client hello (read before any TLS is set up)
/// tells a device's MCS connection (`mtalk.google.com`) and Firefox's push connection
/// (`push.services.mozilla.com`) from everything else, which is HTTPS with HTTP/2 and HTTP/1.1.
struct DropInChildChannel: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let channel: any Channel
        /// Known once the client hello has been read (the channel reads only after setup).
        let route: EventLoopFuture<Route>
    }

    enum Route {
        case http(HTTP2UpgradeChannel.Value)
        /// Handed to the device gateway, which serves it from then on (MCS, or Mozilla's push
        /// protocol).
        case device
    }

    let http: HTTP2UpgradeChannel
    let gateway: DeviceGateway
    /// The drop-in certificate, without ALPN: what a device on port 443 is shown.
    let deviceTLS: NIOSSLContext
    /// Mozilla's push protocol, when served: `push.services.mozilla.com` goes to it.
    let mozillaPush: MozillaPushService?
    /// Bounds the connections not yet authenticated (an HTTPS one never is).
    let admission: ConnectionAdmission

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let route = ConnectionRoute<Route>(channel: channel)
        let reader = SNIHandler { result in
            route.decide {
                if case .hostname(let name) = result, DropInHosts.isDeviceGateway(name) {
                    return channel.eventLoop.makeCompletedFuture {
                        try gateway.adopt(channel, tls: deviceTLS)
                        return .device
                    }
                }
                if case .hostname(let name) = result, DropInHosts.isMozillaPush(name), let mozillaPush {
                    return channel.eventLoop.makeCompletedFuture {
                        try gateway.adoptMozillaPush(
                            channel, service: mozillaPush, tls: deviceTLS,
                            endpointBase: "https://" + DropInHosts.mozillaEndpointHost)
                        return .device
                    }
                }
                return http.setup(channel: channel, logger: logger).flatMapThrowing { value in
                    let tls = try channel.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self)
                    try channel.pipeline.syncOperations.addHandler(HTTP2StreamAllowance(), position: .after(tls))
                    return .http(value)
                }
            }
            // The reader then removes itself and hands the client hello on to the TLS handler.
        }
        return channel.eventLoop.makeCompletedFuture {
            try route.install(reader: reader, admission: admission)
            return Value(channel: channel, route: route.future)
        }
    }

    func handle(value: Value, logger: Logger) async {
        guard case .http(let http) = try? await value.route.get() else { return }
        await self.http.handle(value: http, logger: logger)
    }
}
