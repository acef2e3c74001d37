import Foundation
import HeraldClient
public import HeraldCore
import _CryptoExtras

/// A service-account key file, used the way google-auth uses it: sign a JWT assertion
/// and exchange it at `token_uri` for an access token.
public struct ServiceAccountCredentials: Sendable {
    /// The project the key belongs to.
    public var projectID: String
    /// The key id.
    public var keyID: String
    /// The service account's email.
    public var clientEmail: String
    /// Where tokens are obtained.
    public var tokenURI: String
    private var privateKeyPEM: String

    /// Why a key file or token exchange failed.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads a key file.
    public init(keyFile path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(description: "cannot read \(path)")
        }
        let json = try JSONParser.parse(Array(data))
        guard json["type"]?.stringValue == "service_account",
            let projectID = json["project_id"]?.stringValue, let keyID = json["private_key_id"]?.stringValue,
            let clientEmail = json["client_email"]?.stringValue, let tokenURI = json["token_uri"]?.stringValue,
            let privateKeyPEM = json["private_key"]?.stringValue
        else { throw Failure(description: "\(path) is not a service-account key file") }
        self.projectID = projectID
        self.keyID = keyID
        self.clientEmail = clientEmail
        self.tokenURI = tokenURI
        self.privateKeyPEM = privateKeyPEM
    }

    /// A signed JWT-bearer assertion, as google-auth makes it.
    public func assertion(now: Timestamp, scope: String = "https://www.googleapis.com/auth/firebase.messaging")
        throws -> String
    {
        let key = try _RSA.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        let header = JSONValue.stringObject([("typ", "JWT"), ("alg", "RS256"), ("kid", keyID)])
        let claims = JSONValue.object([
            (key: "iss", value: .string(clientEmail)), (key: "scope", value: .string(scope)),
            (key: "aud", value: .string("https://oauth2.googleapis.com/token")),
            (key: "iat", value: .number(Double(now.seconds))), (key: "exp", value: .number(Double(now.seconds + 3600))),
        ])
        let input = Base64URL.encode(header.renderedBytes) + "." + Base64URL.encode(claims.renderedBytes)
        let signature = try key.signature(for: Array(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }

    /// Exchanges an assertion for an access token at `token_uri`.
    public func accessToken(now: Timestamp = SystemClock().now()) async throws -> String {
        let form =
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(try assertion(now: now))"
        let result = try await WebRequest.send(
            .POST, tokenURI, headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Array(form.utf8))
        let body = try? JSONParser.parse(result.body)
        guard result.status == 200, let token = body?["access_token"]?.stringValue else {
            throw Failure(
                description: "token exchange failed (\(result.status)): \(String(decoding: result.body, as: UTF8.self))"
            )
        }
        return token
    }
}
