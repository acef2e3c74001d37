public import Hummingbird
public import NIOCore

/// The context every route gets: Hummingbird's basics and the address the request came
/// from, which bounds what unauthenticated device endpoints let one address do
/// (`DeviceRequestLimiter`).
public struct HeraldRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The peer's address; nil where there is none (a test's in-memory channel).
    public let remoteAddress: SocketAddress?
    /// The connection the request came on: a long answer (an event stream) ends when it closes.
    public let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        channel = source.channel
    }

    /// The peer's IP address as text ("" when unknown), the key of per-address limits.
    public var sourceAddress: String { remoteAddress?.ipAddress ?? "" }
}
