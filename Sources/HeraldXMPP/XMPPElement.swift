/// An XML element of an XMPP stream: a stanza and what it holds. Names are kept as written,
/// prefix and all; `localName` drops the prefix, which is how stanzas are told apart.
public struct XMPPElement: Sendable, Equatable {
    /// A child: an element or text.
    public indirect enum Node: Sendable, Equatable {
        case element(XMPPElement)
        case text(String)
    }

    public var name: String
    public var attributes: [(name: String, value: String)]
    public var children: [Node]

    public init(_ name: String, attributes: [(name: String, value: String)] = [], children: [Node] = []) {
        self.name = name
        self.attributes = attributes
        self.children = children
    }

    public static func == (lhs: XMPPElement, rhs: XMPPElement) -> Bool {
        lhs.name == rhs.name && lhs.attributes.elementsEqual(rhs.attributes, by: { $0 == $1 })
            && lhs.children == rhs.children
    }

    /// The name without its namespace prefix.
    public var localName: Substring {
        name.split(separator: ":", maxSplits: 1).last ?? Substring(name)
    }

    public func attribute(_ name: String) -> String? {
        attributes.first { $0.name == name }?.value
    }

    /// The first child element with this local name.
    public func child(_ localName: String) -> XMPPElement? {
        for case .element(let element) in children where element.localName == localName { return element }
        return nil
    }

    /// The child elements.
    public var elements: [XMPPElement] {
        children.compactMap { if case .element(let element) = $0 { element } else { nil } }
    }

    /// The text directly inside the element.
    public var text: String {
        children.reduce(into: "") { if case .text(let text) = $1 { $0 += text } }
    }

    /// The element written as XML.
    public var rendered: String {
        var output = "<" + name
        for (name, value) in attributes { output += " \(name)=\"\(Self.escaped(value, quotes: true))\"" }
        guard !children.isEmpty else { return output + "/>" }
        output += ">"
        for child in children {
            switch child {
            case .element(let element): output += element.rendered
            case .text(let text): output += Self.escaped(text, quotes: false)
            }
        }
        return output + "</\(name)>"
    }

    /// `text` with the characters XML reserves written as entities.
    public static func escaped(_ text: String, quotes: Bool) -> String {
        var output = ""
        output.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"" where quotes: output += "&quot;"
            case "'" where quotes: output += "&apos;"
            default: output.unicodeScalars.append(character)
            }
        }
        return output
    }
}
