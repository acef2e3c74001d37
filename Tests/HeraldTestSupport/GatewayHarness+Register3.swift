import Foundation
public import HeraldCore
import HeraldTools

extension GatewayHarness {
    /// Posts a `register3` form as `device`, as real clients do; answers the status and the
    /// body line.
    public func register3(_ device: Device, _ fields: [(String, String)]) async throws -> (status: Int, line: String) {
        let form = fields.map { name, value in
            "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value)"
        }.joined(separator: "&")
        let result = try await HTTPConnection.with(host: "127.0.0.1", port: httpPort) { connection in
            try await connection.request(
                .POST, "/c2dm/register3",
                headers: [
                    ("Authorization", "AidLogin \(device.androidID):\(device.securityToken)"),
                    ("Content-Type", "application/x-www-form-urlencoded"),
                ], body: Array(form.utf8))
        }
        return (result.status, String(decoding: result.body, as: UTF8.self))
    }
}
