import Crypto
import Foundation

/// The opening handshake of a WebSocket server (RFC 6455 §4.2), as a value: a request head
/// in, the answer to write out, and whether frames follow it. Mozilla's push protocol needs
/// nothing more of HTTP, so its connections carry no HTTP handlers at all.
public enum WebSocketHandshake {
    /// The longest request head read: a longer one is no WebSocket client's.
    public static let maximumHeadBytes = 8_192

    /// What a request head is answered with.
    public struct Answer: Equatable, Sendable {
        /// The response head, or a whole response that closes the connection.
        public let response: String
        /// 101: WebSocket frames follow the response both ways.
        public let upgraded: Bool
    }

    /// The index just past a head's blank line, if the head is complete.
    public static func headEnd(_ bytes: some Collection<UInt8>) -> Int? {
        var matched = 0
        var offset = 0
        for byte in bytes {
            offset += 1
            matched = byte == (matched % 2 == 0 ? 13 : 10) ? matched + 1 : (byte == 13 ? 1 : 0)
            if matched == 4 { return offset }
        }
        return nil
    }

    /// Whether a request head is a GET that asks to upgrade to a WebSocket (§4.1).
    public static func asksForWebSocket(_ head: some Collection<UInt8>) -> Bool {
        let request = Request(head)
        return request.method == "get" && request.values("upgrade").contains("websocket")
    }

    /// The answer to a request head: 101 with the key's accept value; 426 (with the version
    /// this server speaks) to a request that is not a version 13 upgrade; 400 to one whose
    /// key is not 16 bytes of base64.
    public static func answer(_ head: some Collection<UInt8>) -> Answer {
        let request = Request(head)
        guard request.method == "get", request.values("upgrade").contains("websocket"),
            request.values("connection").contains("upgrade"), request.values("sec-websocket-version") == ["13"]
        else {
            return refusal(
                "426 Upgrade Required", "This address takes WebSocket connections only.\n",
                extra: "upgrade: websocket\r\nsec-websocket-version: 13\r\n")
        }
        guard let key = request.header("sec-websocket-key"), Data(base64Encoded: key)?.count == 16 else {
            return refusal("400 Bad Request", "Sec-WebSocket-Key must be 16 bytes in base64.\n", extra: "")
        }
        let accept = Data(Insecure.SHA1.hash(data: Data((key + Self.guid).utf8))).base64EncodedString()
        return Answer(
            response: "HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n"
                + "sec-websocket-accept: \(accept)\r\n\r\n",
            upgraded: true)
    }

    /// The value a key is hashed with (§1.3).
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    private static func refusal(_ status: String, _ text: String, extra: String) -> Answer {
        Answer(
            response: "HTTP/1.1 \(status)\r\ncontent-type: text/plain\r\ncontent-length: \(text.utf8.count)\r\n"
                + extra + "connection: close\r\n\r\n" + text,
            upgraded: false)
    }

    /// A request head's method and header lines: names and tokens compared case-blind,
    /// values kept as sent (a key is base64).
    private struct Request {
        let method: String
        let lines: [(name: String, value: Substring)]

        init(_ head: some Collection<UInt8>) {
            let rows = String(decoding: head, as: UTF8.self).split(separator: "\r\n")
            method = rows.first?.split(separator: " ").first?.lowercased() ?? ""
            lines = rows.dropFirst().compactMap { line in
                let parts = line.split(separator: ":", maxSplits: 1)
                return parts.count == 2 ? (parts[0].trimmingSpaces.lowercased(), parts[1].trimmingSpaces) : nil
            }
        }

        /// The first value of a header, as sent.
        func header(_ name: String) -> String? {
            lines.first { $0.name == name }.map { String($0.value) }
        }

        /// Every comma-separated token of every line of a header, lower-cased.
        func values(_ name: String) -> [String] {
            lines.filter { $0.name == name }.flatMap {
                $0.value.split(separator: ",").map { $0.trimmingSpaces.lowercased() }
            }
        }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return text
    }
}
