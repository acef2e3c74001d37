import AsyncHTTPClient
public import HeraldClient
public import NIOCore
public import NIOHTTP1

/// One request over AsyncHTTPClient, `http://` or `https://`, trusting the system's roots:
/// what the command line and the tools use outside their load generators, which keep their
/// own keep-alive connections (`HTTPConnection`) to measure the server rather than a client.
public enum WebRequest {
    /// Why a request could not be made.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The largest answer read.
    static let maximumBodyBytes = 16 << 20

    /// Sends `body` to `url` and reads the whole answer.
    public static func send(
        _ method: HTTPMethod, _ url: String, headers: [(String, String)] = [], body: [UInt8] = [],
        timeout: TimeAmount = .seconds(30)
    ) async throws -> HTTPResult {
        guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
            throw Failure(description: "not an http:// or https:// URL: \(url)")
        }
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if method == .POST || !body.isEmpty { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await HTTPClient.shared.execute(request, timeout: timeout)
        let bytes = try await response.body.collect(upTo: maximumBodyBytes)
        return HTTPResult(
            status: Int(response.status.code), headers: response.headers, body: Array(bytes.readableBytesView))
    }
}
