public import NIOCore
import Synchronization

/// Bounds the connections that have not authenticated yet, on every listener (device
/// gateway, XMPP, HTTP, drop-in): at most `perAddress` from one source address and at most
/// `total` in all. A connection that only opens a socket then holds at most its share of
/// the open-files limit, and the rest stays for healthy clients. A connection stops counting
/// once it authenticates (a device's login, an app server's SASL; an HTTP connection never
/// does) or closes. Past either bound a new connection is closed at once. An authenticated
/// connection counts against `authenticatedPerAddress`, a high bound that keeps one
/// address (one host, or a network behind one NAT) from holding every descriptor with
/// devices that check in for free; past it the connection is closed as it authenticates.
public final class ConnectionAdmission: Sendable {
    /// The bounds; 0 lifts one.
    public struct Limits: Sendable, Equatable {
        /// Connections not yet authenticated from one source address. Default 1,000.
        public var perAddress: Int = 1_000
        /// Connections not yet authenticated in all. Default 10,000; `herald serve` uses half
        /// of its open-files limit.
        public var total: Int = 10_000
        /// Authenticated connections from one source address. Default 10,000.
        public var authenticatedPerAddress: Int = 10_000

        public init(perAddress: Int = 1_000, total: Int = 10_000, authenticatedPerAddress: Int = 10_000) {
            self.perAddress = perAddress
            self.total = total
            self.authenticatedPerAddress = authenticatedPerAddress
        }
    }

    /// Why a connection was closed at once.
    public enum Refusal: String, Sendable {
        case perAddress = "per-address"
        case total
        case authenticatedPerAddress = "authenticated-per-address"
    }

    /// Sent down a connection's pipeline (`triggerUserOutboundEvent`) when it authenticates.
    public struct Authenticated: Sendable {
        public init() {}
    }

    struct State {
        var byAddress: [String: Int] = [:]
        var total = 0
        var authenticatedByAddress: [String: Int] = [:]
    }

    public let limits: Limits
    private let state = Mutex(State())
    /// Hears each connection closed at once.
    let onRefusal: @Sendable (Refusal) -> Void

    public init(limits: Limits, onRefusal: @escaping @Sendable (Refusal) -> Void = { _ in }) {
        self.limits = limits
        self.onRefusal = onRefusal
    }

    /// Counts a new connection from `address`; nil when it is admitted, otherwise why not.
    public func admit(_ address: String) -> Refusal? {
        state.withLock { state in
            if limits.total > 0, state.total >= limits.total { return .total }
            let count = state.byAddress[address, default: 0]
            if limits.perAddress > 0, count >= limits.perAddress { return .perAddress }
            state.byAddress[address] = count + 1
            state.total += 1
            return nil
        }
    }

    /// Stops counting a connection from `address` (it authenticated or closed).
    public func release(_ address: String) {
        state.withLock { state in
            guard let count = state.byAddress[address] else { return }
            state.byAddress[address] = count > 1 ? count - 1 : nil
            state.total -= 1
        }
    }

    /// A connection from `address` authenticated: it stops counting as not authenticated,
    /// and counts as authenticated unless `address` holds its bound (then it is refused).
    public func authenticated(_ address: String) -> Refusal? {
        release(address)
        return state.withLock { state in
            let count = state.authenticatedByAddress[address, default: 0]
            if limits.authenticatedPerAddress > 0, count >= limits.authenticatedPerAddress {
                return .authenticatedPerAddress
            }
            state.authenticatedByAddress[address] = count + 1
            return nil
        }
    }

    /// An authenticated connection from `address` closed.
    public func releaseAuthenticated(_ address: String) {
        state.withLock { state in
            guard let count = state.authenticatedByAddress[address] else { return }
            state.authenticatedByAddress[address] = count > 1 ? count - 1 : nil
        }
    }

    /// Connections not yet authenticated now: in all, and from `address`.
    public func counted(from address: String) -> (total: Int, address: Int) {
        state.withLock { ($0.total, $0.byAddress[address, default: 0]) }
    }

    /// A handler to put first in a new connection's pipeline.
    public func makeHandler() -> some ChannelHandler & RemovableChannelHandler {
        AdmissionHandler(admission: self)
    }
}
