public import Logging

/// A log handler that writes through another one after making every message and metadata
/// value safe to print: control characters (newlines, ANSI escapes) are written as
/// escapes, so a value a client chose cannot forge a log line or drive a terminal, and each
/// metadata value is shortened to `metadataLimit` characters.
public struct EscapingLogHandler: LogHandler {
    public var inner: any LogHandler
    /// How many characters of a metadata value are written.
    public var metadataLimit: Int

    public init(wrapping inner: any LogHandler, metadataLimit: Int = 200) {
        self.inner = inner
        self.metadataLimit = metadataLimit
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }

    /// The logger's own metadata, kept here and handed to `inner` with each event: setting a
    /// key (the HTTP server does so for every request) then costs a dictionary write, where
    /// some handlers re-render all their metadata on each change.
    public var metadata: Logger.Metadata = [:]

    public var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var event = event
        event.message = Logger.Message(stringLiteral: Self.escaped(event.message.description))
        let merged = metadata.isEmpty ? event.metadata : metadata.merging(event.metadata ?? [:]) { $1 }
        event.metadata = merged?.mapValues { escaped($0) }
        inner.log(event: event)
    }

    private func escaped(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): .string(Self.escaped(text, limit: metadataLimit))
        case .stringConvertible(let convertible): .string(Self.escaped(convertible.description, limit: metadataLimit))
        case .array(let values): .array(values.map(escaped))
        case .dictionary(let values): .dictionary(values.mapValues(escaped))
        }
    }

    /// `text` with control characters escaped (`\n`, `\r`, `\t`, `\u{1B}`…), cut after
    /// `limit` characters with an ellipsis.
    public static func escaped(_ text: String, limit: Int = .max) -> String {
        var output = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == limit {
                output += "…"
                break
            }
            count += 1
            switch scalar {
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\\": output += "\\\\"
            default:
                // Control characters, line and paragraph separators, and the marks and
                // overrides that reorder text on a terminal (U+200E, U+200F, U+202A–U+202E,
                // U+2066–U+2069): a logged value can neither forge a line nor hide its order.
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                    || (0x2028...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
                    || scalar == "\u{200E}" || scalar == "\u{200F}" || scalar == "\u{FEFF}"
                {
                    output += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        return output
    }
}
