import HeraldGateway
import HummingbirdCore
import Logging
import NIOCore

/// A connection to the plain HTTP port when Mozilla's push protocol is served there: its
/// first request head (`FirstRequestReader`) tells a WebSocket client (Firefox, Sunup),
/// which the device gateway serves from then on, from HTTP, which Hummingbird serves.
struct HTTPPortChildChannel: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let channel: any Channel
        let route: EventLoopFuture<Route>
    }

    enum Route {
        case http(HTTP1Channel.Value)
        /// Handed to the device gateway.
        case mozillaPush
    }

    let http: HTTP1Channel
    let gateway: DeviceGateway
    let service: MozillaPushService
    /// Bounds the connections not yet authenticated.
    let admission: ConnectionAdmission

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let route = ConnectionRoute<Route>(channel: channel)
        let reader = FirstRequestReader { isWebSocket in
            route.decide {
                guard isWebSocket else { return http.setup(channel: channel, logger: logger).map { .http($0) } }
                return channel.eventLoop.makeCompletedFuture {
                    try gateway.adoptMozillaPush(channel, service: service)
                    return .mozillaPush
                }
            }
        }
        return channel.eventLoop.makeCompletedFuture {
            // Receive buffers as small as the device gateway's from the first read: a buffer
            // read into is kept for the next read, for as long as a WebSocket client stays.
            try channel.syncOptions?.setOption(.recvAllocator, value: DeviceGateway.receiveBuffers)
            try route.install(reader: reader, admission: admission)
            return Value(channel: channel, route: route.future)
        }
    }

    func handle(value: Value, logger: Logger) async {
        guard case .http(let http) = try? await value.route.get() else { return }
        await self.http.handle(value: http, logger: logger)
    }
}
