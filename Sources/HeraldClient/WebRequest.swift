import AsyncHTTPClient
public import NIOCore
public import NIOHTTP1
import NIOSSL

/// One request over AsyncHTTPClient, `http://` or `https://`: how the device SDK registers,
/// and what the command line and the tools use outside their load generators, which keep
/// their own keep-alive connections (`HTTPConnection`) to measure the server rather than a
/// client.
public enum WebRequest {
    /// Why a request could not be made.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The largest answer read.
    static let maximumBodyBytes = 16 << 20

    /// Sends `body` to `url` and reads the whole answer. An `https://` URL's certificate is
    /// checked against the system's roots (the shared client), or against only the CA
    /// certificate in the PEM file `certificateAuthority` names (a client made for the
    /// request and shut down after it: for the few requests of a registration).
    public static func send(
        _ method: HTTPMethod, _ url: String, headers: [(String, String)] = [], body: [UInt8] = [],
        certificateAuthority: String? = nil, timeout: Duration = .seconds(30)
    ) async throws -> HTTPResult {
        guard isWebURL(url) else { throw Failure(description: "not an http:// or https:// URL: \(url)") }
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if method == .POST || !body.isEmpty { request.body = .bytes(ByteBuffer(bytes: body)) }
        guard let certificateAuthority else { return try await send(request, on: .shared, timeout: timeout) }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(certificateAuthority)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
        let result: HTTPResult
        do {
            result = try await send(request, on: client, timeout: timeout)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
        return result
    }

    /// Whether `url` is one `send` takes.
    public static func isWebURL(_ url: String) -> Bool {
        url.hasPrefix("http://") || url.hasPrefix("https://")
    }

    private static func send(_ request: HTTPClientRequest, on client: HTTPClient, timeout: Duration) async throws
        -> HTTPResult
    {
        let response = try await client.execute(request, timeout: TimeAmount(timeout))
        let bytes = try await response.body.collect(upTo: maximumBodyBytes)
        return HTTPResult(
            status: Int(response.status.code), headers: response.headers, body: Array(bytes.readableBytesView))
    }
}
