import HeraldCore
import HeraldProtocol
import SwiftProtobuf

/// The HTTP side of becoming a device: check-in, Firebase installation, and registration
/// (`register3` for native platforms, FCM web registrations for web), over AsyncHTTPClient.
public struct DeviceRegistrar: Sendable {
    /// Herald's base URL, `http://` or `https://`, without a trailing slash.
    let server: String
    /// The PEM file of the only CA an `https://` server's certificate is checked against;
    /// nil for the system's roots.
    let certificateAuthority: String?
    /// How long a request may take, retries of a failed connection included.
    let timeout: Duration

    /// Why a registration step failed.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// A registrar for the Herald at the base URL `server` (`http://` or `https://`).
    public init(server: String, trusting certificateAuthority: String? = nil, timeout: Duration = .seconds(30))
        throws(Failure)
    {
        guard WebRequest.isWebURL(server) else {
            throw Failure(description: "the server URL must be http:// or https://, not \(server)")
        }
        self.server = server.hasSuffix("/") ? String(server.dropLast()) : server
        self.certificateAuthority = certificateAuthority
        self.timeout = timeout
    }

    private func post(_ path: String, headers: [(String, String)], body: [UInt8]) async throws -> HTTPResult {
        try await WebRequest.send(
            .POST, server + path, headers: headers, body: body, certificateAuthority: certificateAuthority,
            timeout: timeout)
    }

    /// Checks in: a new device, or the existing one when `existing` is given.
    public func checkin(existing: (androidID: UInt64, securityToken: UInt64)?) async throws -> (UInt64, UInt64) {
        var request = CheckinProto_AndroidCheckinRequest()
        request.version = 3
        request.userSerialNumber = 0
        var checkin = CheckinProto_AndroidCheckinProto()
        checkin.type = .deviceAndroidOs
        request.checkin = checkin
        if let existing {
            request.id = Int64(bitPattern: existing.androidID)
            request.securityToken = existing.securityToken
        }
        let result = try await post(
            "/checkin", headers: [("Content-Type", "application/x-protobuf")], body: try request.serializedBytes())
        guard result.status == 200 else { throw Failure(description: "check-in failed with HTTP \(result.status)") }
        let response = try CheckinProto_AndroidCheckinResponse(serializedBytes: result.body)
        return (response.androidID, response.securityToken)
    }

    /// Creates a Firebase installation; answers its id, auth token and the project number.
    public func install(projectID: String, apiKey: String, appID: String) async throws
        -> (fid: String, authToken: String, projectNumber: String)
    {
        let body = JSONValue.stringObject([
            ("fid", SecureRandom.token(bytes: 16)), ("appId", appID), ("authVersion", "FIS_v2"),
            ("sdkVersion", "herald:1"),
        ])
        let result = try await post(
            "/v1/projects/\(projectID)/installations",
            headers: [("x-goog-api-key", apiKey), ("Content-Type", "application/json")], body: body.renderedBytes)
        let json = try? JSONParser.parse(result.body)
        guard result.status == 200, let fid = json?["fid"]?.stringValue,
            let token = json?["authToken"]?["token"]?.stringValue,
            let number = json?["name"]?.stringValue?.split(separator: "/").dropFirst().first
        else {
            throw Failure(
                description: "installation failed (\(result.status)): \(String(decoding: result.body, as: UTF8.self))")
        }
        return (fid, token, String(number))
    }

    /// `register3`: answers the registration token.
    public func register3(androidID: UInt64, securityToken: UInt64, fields: [(String, String)]) async throws -> String {
        let result = try await postRegister3(androidID: androidID, securityToken: securityToken, fields: fields)
        let text = String(decoding: result.body, as: UTF8.self)
        guard result.status == 200, text.hasPrefix("token=") else {
            throw Failure(description: "registration failed (\(result.status)): \(text)")
        }
        return String(text.dropFirst("token=".count))
    }

    /// Deletes a registration (`register3` with `delete=true`): the app's token, or with a
    /// `subtype` only the push channel of that subtype.
    public func unregister(
        androidID: UInt64, securityToken: UInt64, app: String, token: String? = nil, subtype: String? = nil,
        sender: String? = nil
    ) async throws {
        let named = [("token", token), ("X-subtype", subtype), ("sender", sender)].compactMap { name, value in
            value.map { (name, $0) }
        }
        let result = try await postRegister3(
            androidID: androidID, securityToken: securityToken,
            fields: [("app", app), ("device", String(androidID)), ("delete", "true")] + named)
        guard result.status == 200 else {
            throw Failure(
                description: "unregistering failed (\(result.status)): \(String(decoding: result.body, as: UTF8.self))")
        }
    }

    /// An FCM web registration riding on a push channel; answers the registration token.
    /// The device that made the channel says so with its check-in credentials.
    public func registerWeb(
        projectID: String, apiKey: String, installationAuth: String, channelToken: String, p256dh: [UInt8],
        auth: [UInt8], device: (androidID: UInt64, securityToken: UInt64)? = nil
    ) async throws -> String {
        let body = JSONValue.object([
            (
                key: "web",
                value: .stringObject([
                    ("endpoint", "\(origin)/fcm/send/\(channelToken)"),
                    ("p256dh", Base64URL.encode(p256dh)), ("auth", Base64URL.encode(auth)),
                ])
            )
        ])
        return try await postRegistration(
            body, projectID: projectID, apiKey: apiKey, installationAuth: installationAuth, kind: "web",
            headers: device.map { [("Authorization", "AidLogin \($0.androidID):\($0.securityToken)")] } ?? [])
    }

    /// Registers an Apple app instance's installation to be reached through APNs, as the
    /// Firebase iOS SDK does (`ios` with the APNs token), with the keys its messages are
    /// sealed for; answers the registration token.
    public func registerApple(
        projectID: String, apiKey: String, installationAuth: String, apnsToken: String, sandbox: Bool,
        bundleID: String, p256dh: [UInt8], auth: [UInt8]
    ) async throws -> String {
        let body = JSONValue.object([
            (
                key: "ios",
                value: .stringObject([
                    ("apns_token", apnsToken), ("apns_environment", sandbox ? "SANDBOX" : "PROD"),
                    ("bundle_id", bundleID), ("p256dh", Base64URL.encode(p256dh)), ("auth", Base64URL.encode(auth)),
                ])
            ),
            (key: "fcm_sdk_version", value: .string("herald-client")),
        ])
        return try await postRegistration(
            body, projectID: projectID, apiKey: apiKey, installationAuth: installationAuth, kind: "apple")
    }

    /// Posts an FCM registration (`web` or `ios`) for an installation; answers its token.
    private func postRegistration(
        _ body: JSONValue, projectID: String, apiKey: String, installationAuth: String, kind: String,
        headers: [(String, String)] = []
    ) async throws -> String {
        let result = try await post(
            "/v1/projects/\(projectID)/registrations",
            headers: [
                ("x-goog-api-key", apiKey), ("x-goog-firebase-installations-auth", installationAuth),
                ("Content-Type", "application/json"),
            ] + headers,
            body: body.renderedBytes)
        guard result.status == 200, let token = (try? JSONParser.parse(result.body))?["token"]?.stringValue else {
            throw Failure(
                description:
                    "\(kind) registration failed (\(result.status)): \(String(decoding: result.body, as: UTF8.self))")
        }
        return token
    }

    private func postRegister3(androidID: UInt64, securityToken: UInt64, fields: [(String, String)]) async throws
        -> HTTPResult
    {
        let form = fields.map { "\(percentEncode($0.0))=\(percentEncode($0.1))" }.joined(separator: "&")
        return try await post(
            "/c2dm/register3",
            headers: [
                ("Authorization", "AidLogin \(androidID):\(securityToken)"),
                ("Content-Type", "application/x-www-form-urlencoded"),
            ],
            body: Array(form.utf8))
    }

    private func percentEncode(_ text: String) -> String {
        var output = ""
        for byte in text.utf8 {
            if Base64URL.isAlphabet(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "~") {
                output.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                output += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return output
    }
}

extension DeviceRegistrar {
    /// The server's scheme, host and port, without a path.
    var origin: String {
        let afterScheme = server.range(of: "://").map(\.upperBound) ?? server.startIndex
        return String(server[..<(server[afterScheme...].firstIndex(of: "/") ?? server.endIndex)])
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        String(repeating: "0", count: max(0, length - count)) + self
    }
}
