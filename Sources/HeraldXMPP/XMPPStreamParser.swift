/// Reads an XMPP stream as its bytes arrive (RFC 6120 §4): the stream's opening tag, each
/// stanza whole, whitespace kept alive between stanzas, and the stream's close. Only what
/// XMPP allows is read: no comments, processing instructions after the start, DTDs or
/// CDATA, and only the five predefined entities and character references. A stanza over
/// `maximumStanzaBytes`, nesting over `maximumDepth` or a tag with more than
/// `maximumAttributes` fails the stream.
public struct XMPPStreamParser: Sendable {
    /// What the stream said.
    public enum Event: Sendable, Equatable {
        /// `<stream:stream …>`, with its attributes and no children.
        case streamOpened(XMPPElement)
        case stanza(XMPPElement)
        /// Whitespace between stanzas: a keepalive.
        case whitespace
        case streamClosed
    }

    /// A stream that is not well-formed XMPP; the reason is for the log.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    public static let maximumStanzaBytes = 65_536
    public static let maximumDepth = 32
    public static let maximumAttributes = 32

    private var buffer: [UInt8] = []
    /// Elements of the stanza being read, outermost first.
    private var open: [XMPPElement] = []
    private var streamOpened = false
    /// Bytes of the stanza being read so far.
    private var stanzaBytes = 0

    public init() {}

    /// Forgets the stream: after SASL succeeds both sides start a new one (RFC 6120 §6.4.6).
    public mutating func restart() {
        self = XMPPStreamParser()
    }

    /// The events `bytes` complete; what is incomplete waits for the next bytes.
    public mutating func parse(_ bytes: some Sequence<UInt8>) throws(Failure) -> [Event] {
        buffer.append(contentsOf: bytes)
        var events: [Event] = []
        var position = 0
        defer { buffer.removeFirst(position) }
        while position < buffer.count {
            let start = position
            if buffer[position] == UInt8(ascii: "<") {
                guard let end = tagEnd(from: position) else { break }
                position = end + 1
                if let event = try tag(buffer[(start + 1)..<end]) { events.append(event) }
            } else if open.isEmpty {
                // Between stanzas only whitespace may come, and it comes alone as a keepalive.
                let end = buffer[position...].firstIndex(of: UInt8(ascii: "<")) ?? buffer.count
                guard buffer[position..<end].allSatisfy(Self.isWhitespace) else {
                    throw Failure(description: "text outside a stanza")
                }
                position = end
                if streamOpened { events.append(.whitespace) }
            } else {
                guard let end = buffer[position...].firstIndex(of: UInt8(ascii: "<")) else { break }
                position = end
                open[open.count - 1].children.append(.text(try Self.decoded(buffer[start..<end])))
            }
            if !open.isEmpty {
                stanzaBytes += position - start
                guard stanzaBytes <= Self.maximumStanzaBytes else {
                    throw Failure(description: "a stanza over \(Self.maximumStanzaBytes) bytes")
                }
            }
        }
        // What waits for its end counts too, so that a stanza that never ends cannot grow.
        guard (open.isEmpty ? 0 : stanzaBytes) + buffer.count - position <= Self.maximumStanzaBytes else {
            throw Failure(description: "a stanza over \(Self.maximumStanzaBytes) bytes")
        }
        return events
    }

    /// The index of the `>` that ends the tag starting at `start`, outside quoted values.
    private func tagEnd(from start: Int) -> Int? {
        var quote: UInt8?
        for index in (start + 1)..<buffer.count {
            let byte = buffer[index]
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: ">") {
                return index
            }
        }
        return nil
    }

    private mutating func tag(_ content: ArraySlice<UInt8>) throws(Failure) -> Event? {
        guard let first = content.first else { throw Failure(description: "an empty tag") }
        switch first {
        case UInt8(ascii: "?"):
            guard !streamOpened, content.last == UInt8(ascii: "?") else {
                throw Failure(description: "a processing instruction")
            }
            return nil
        case UInt8(ascii: "!"):
            throw Failure(description: "a comment, DTD or CDATA section")
        case UInt8(ascii: "/"):
            let name = try Self.name(content.dropFirst())
            guard let element = open.popLast() else {
                guard streamOpened, name.hasSuffix("stream") else {
                    throw Failure(description: "an unmatched </\(name)>")
                }
                streamOpened = false
                return .streamClosed
            }
            guard element.name == name else { throw Failure(description: "</\(name)> closes <\(element.name)>") }
            return finished(element)
        default:
            let selfClosing = content.last == UInt8(ascii: "/")
            let element = try Self.startTag(selfClosing ? content.dropLast() : content)
            guard streamOpened else {
                guard element.localName == "stream", !selfClosing else {
                    throw Failure(description: "<\(element.name)> before the stream")
                }
                streamOpened = true
                return .streamOpened(element)
            }
            if selfClosing { return finished(element) }
            guard open.count < Self.maximumDepth else { throw Failure(description: "nesting too deep") }
            if open.isEmpty { stanzaBytes = 0 }
            open.append(element)
            return nil
        }
    }

    /// A complete element: a stanza, or a child of the element still open.
    private mutating func finished(_ element: XMPPElement) -> Event? {
        guard !open.isEmpty else { return .stanza(element) }
        open[open.count - 1].children.append(.element(element))
        return nil
    }

    private static func startTag(_ content: ArraySlice<UInt8>) throws(Failure) -> XMPPElement {
        var rest = content
        let nameEnd = rest.firstIndex(where: isWhitespace) ?? rest.endIndex
        var element = XMPPElement(try name(rest[rest.startIndex..<nameEnd]))
        rest = rest[nameEnd...]
        while true {
            rest = rest.drop(while: isWhitespace)
            guard !rest.isEmpty else { return element }
            guard let equals = rest.firstIndex(of: UInt8(ascii: "=")) else {
                throw Failure(description: "an attribute without a value")
            }
            let attributeName = try name(rest[rest.startIndex..<equals].reversed().drop(while: isWhitespace).reversed())
            rest = rest[(equals + 1)...].drop(while: isWhitespace)
            guard let quote = rest.first, quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'"),
                let close = rest.dropFirst().firstIndex(of: quote)
            else { throw Failure(description: "an unquoted attribute value") }
            element.attributes.append((attributeName, try decoded(rest[(rest.startIndex + 1)..<close])))
            guard element.attributes.count <= maximumAttributes else {
                throw Failure(description: "more than \(maximumAttributes) attributes")
            }
            rest = rest[(close + 1)...]
        }
    }

    private static func name(_ bytes: some Collection<UInt8>) throws(Failure) -> String {
        guard !bytes.isEmpty, bytes.count <= 256,
            bytes.allSatisfy({
                $0 >= 0x80 || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
                    || $0 == UInt8(ascii: ".") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0 | 0x20)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
            }),
            let name = String(validating: bytes, as: UTF8.self)
        else { throw Failure(description: "a malformed name") }
        return name
    }

    /// Text or an attribute value with its entities and character references replaced.
    static func decoded(_ bytes: ArraySlice<UInt8>) throws(Failure) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "<") { throw Failure(description: "a < in a value") }
            guard byte == UInt8(ascii: "&") else {
                output.append(byte)
                index += 1
                continue
            }
            guard let semicolon = bytes[index...].prefix(12).firstIndex(of: UInt8(ascii: ";")) else {
                throw Failure(description: "an unfinished entity")
            }
            let entity = String(decoding: bytes[(index + 1)..<semicolon], as: UTF8.self)
            switch entity {
            case "lt": output.append(UInt8(ascii: "<"))
            case "gt": output.append(UInt8(ascii: ">"))
            case "amp": output.append(UInt8(ascii: "&"))
            case "quot": output.append(UInt8(ascii: "\""))
            case "apos": output.append(UInt8(ascii: "'"))
            default:
                let number: UInt32? =
                    entity.hasPrefix("#x")
                    ? UInt32(entity.dropFirst(2), radix: 16) : entity.hasPrefix("#") ? UInt32(entity.dropFirst()) : nil
                guard let number, let scalar = Unicode.Scalar(number) else {
                    throw Failure(description: "an unknown entity &\(entity);")
                }
                output.append(contentsOf: String(Character(scalar)).utf8)
            }
            index = semicolon + 1
        }
        guard let text = String(validating: output, as: UTF8.self) else { throw Failure(description: "invalid UTF-8") }
        return text
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
