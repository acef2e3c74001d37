import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Why a device's connection to its gateway failed or ended, and when it is tried again.
public struct ConnectionFailure: Sendable, Equatable, CustomStringConvertible {
    /// The gateway, `HOST:PORT`.
    public let gateway: String
    /// The connection had logged in before it ended.
    public let loggedIn: Bool
    /// What went wrong, in words: the socket's, TLS's or the session's.
    public let reason: String
    public let retryInSeconds: Double

    public var description: String {
        let what = loggedIn ? "connection to \(gateway) ended" : "cannot connect to \(gateway)"
        let seconds = (retryInSeconds * 10).rounded() / 10
        return "\(what): \(reason); trying again in \(seconds) s"
    }

    /// An error's words: the first address's for a connection refused, the look-up's for a
    /// name that does not resolve, else the error's own.
    static func reason(_ error: any Error) -> String {
        if let failed = error as? NIOConnectionError {
            if let first = failed.connectionErrors.first { return reason(first.error) }
            if let lookup = failed.dnsAError ?? failed.dnsAAAAError {
                return "\(failed.host) does not resolve: \(lookup)"
            }
            return "\(failed.host) has no address"
        }
        // The system's words alone: NIO's description repeats them around the call's name.
        if let io = error as? IOError { return String(cString: strerror(io.errnoCode)) }
        if let tls = error as? NIOSSLError { return "TLS: \(tls)" }
        if case ChannelError.connectTimeout(let timeout) = error { return "no answer within \(timeout)" }
        return "\(error)"
    }
}
