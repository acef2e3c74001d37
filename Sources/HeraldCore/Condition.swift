/// A topic condition such as `'news' in topics && !('sport' in topics || 'tv' in topics)`.
///
/// `!` binds tightest, then `&&`, then `||`; parentheses group. Topic names go in single
/// (or double) quotes.
public indirect enum Condition: Sendable, Hashable, CustomStringConvertible {
    case topic(String)
    case not(Condition)
    case and(Condition, Condition)
    case or(Condition, Condition)

    /// Why a condition could not be parsed, with the character position of the problem.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The zero-based character position.
        public var position: Int
        /// What was wrong there.
        public var reason: String

        public var description: String { "\(reason) at position \(position)" }
    }

    /// Parses a condition.
    public static func parse(_ text: String) throws(ParseError) -> Condition {
        var parser = ConditionParser(Array(text))
        return try parser.parseCondition()
    }

    /// Every topic term in the order written, duplicates included.
    public var topicTerms: [String] {
        switch self {
        case .topic(let name): return [name]
        case .not(let inner): return inner.topicTerms
        case .and(let a, let b), .or(let a, let b): return a.topicTerms + b.topicTerms
        }
    }

    /// Whether a token with these subscriptions matches.
    public func matches(_ isSubscribed: (String) -> Bool) -> Bool {
        switch self {
        case .topic(let name): return isSubscribed(name)
        case .not(let inner): return !inner.matches(isSubscribed)
        case .and(let a, let b): return a.matches(isSubscribed) && b.matches(isSubscribed)
        case .or(let a, let b): return a.matches(isSubscribed) || b.matches(isSubscribed)
        }
    }

    public var description: String {
        switch self {
        case .topic(let name): return "'\(name)' in topics"
        case .not(let inner): return "!(\(inner))"
        case .and(let a, let b): return "(\(a) && \(b))"
        case .or(let a, let b): return "(\(a) || \(b))"
        }
    }
}

private struct ConditionParser {
    let characters: [Character]
    var index = 0
    var depth = 0

    init(_ characters: [Character]) {
        self.characters = characters
    }

    mutating func parseCondition() throws(Condition.ParseError) -> Condition {
        let condition = try parseOr()
        skipSpaces()
        guard index == characters.count else { throw fail("unexpected '\(characters[index])'") }
        return condition
    }

    func fail(_ reason: String) -> Condition.ParseError {
        Condition.ParseError(position: index, reason: reason)
    }

    mutating func skipSpaces() {
        while index < characters.count, characters[index].isWhitespace { index += 1 }
    }

    mutating func consume(_ token: String) -> Bool {
        skipSpaces()
        let tokenCharacters = Array(token)
        guard index + tokenCharacters.count <= characters.count,
            Array(characters[index..<index + tokenCharacters.count]) == tokenCharacters
        else { return false }
        index += tokenCharacters.count
        return true
    }

    mutating func parseOr() throws(Condition.ParseError) -> Condition {
        var left = try parseAnd()
        while consume("||") {
            left = .or(left, try parseAnd())
        }
        return left
    }

    mutating func parseAnd() throws(Condition.ParseError) -> Condition {
        var left = try parseUnary()
        while consume("&&") {
            left = .and(left, try parseUnary())
        }
        return left
    }

    mutating func parseUnary() throws(Condition.ParseError) -> Condition {
        depth += 1
        defer { depth -= 1 }
        guard depth <= 32 else { throw fail("expression nested too deeply") }
        if consume("!") {
            return .not(try parseUnary())
        }
        if consume("(") {
            let inner = try parseOr()
            guard consume(")") else { throw fail("expected ')'") }
            return inner
        }
        return try parseTerm()
    }

    mutating func parseTerm() throws(Condition.ParseError) -> Condition {
        skipSpaces()
        guard index < characters.count else { throw fail("expected a topic term such as 'name' in topics") }
        let quote = characters[index]
        guard quote == "'" || quote == "\"" else { throw fail("expected a quoted topic name") }
        index += 1
        let start = index
        while index < characters.count, characters[index] != quote { index += 1 }
        guard index < characters.count else { throw fail("unterminated topic name") }
        let name = String(characters[start..<index])
        guard TopicName.isValid(name) else {
            index = start
            throw fail("invalid topic name '\(name)'")
        }
        index += 1
        guard consume("in") else { throw fail("expected 'in topics'") }
        let beforeTopics = index
        guard consume("topics") else { throw fail("expected 'topics'") }
        guard beforeTopics < index, characters[beforeTopics].isWhitespace else {
            index = beforeTopics
            throw fail("expected 'topics'")
        }
        return .topic(name)
    }
}

/// Topic names as FCM's send path accepts them.
public enum TopicName {
    /// Whether a bare topic name (no `/topics/` prefix) matches `[a-zA-Z0-9-_.~%]{1,900}`.
    public static func isValid(_ name: String) -> Bool {
        let utf8 = name.utf8
        guard !utf8.isEmpty, utf8.count <= 900 else { return false }
        return utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                UInt8(ascii: "~"), UInt8(ascii: "%"):
                return true
            default: return false
            }
        }
    }

    /// The bare name: a leading `/topics/` is removed.
    public static func stripPrefix(_ name: String) -> String {
        name.hasPrefix("/topics/") ? String(name.dropFirst("/topics/".count)) : name
    }
}
