/// Splits a byte stream into MCS frames: a pure state machine that bytes go into and
/// frames come out of, with no I/O, so that the gateway, the client and the fuzzer share it.
public struct MCSFrameDecoder: Sendable {
    /// Why the stream cannot be decoded; the connection must be closed.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case unsupportedVersion(UInt8)
        case unknownTag(UInt8)
        case frameTooLarge(Int)
        case malformedLength

        public var description: String {
            switch self {
            case .unsupportedVersion(let version): return "unsupported MCS version \(version)"
            case .unknownTag(let tag): return "unknown MCS tag \(tag)"
            case .frameTooLarge(let size): return "frame of \(size) bytes is too large"
            case .malformedLength: return "malformed frame length"
            }
        }
    }

    /// The largest payload accepted. Default 64 KiB: MCS messages are normally at most 4 KiB.
    public let maximumPayloadBytes: Int
    private var expectsVersion: Bool
    private var buffer: [UInt8] = []
    private var start = 0

    /// The MCS versions FCM's clients announce.
    public static let supportedVersions: ClosedRange<UInt8> = 38...41

    /// The version the peer announced, once read.
    public private(set) var peerVersion: UInt8?

    /// A decoder; `expectsVersion` when the stream starts with a version byte.
    public init(expectsVersion: Bool, maximumPayloadBytes: Int = 64 * 1024) {
        self.expectsVersion = expectsVersion
        self.maximumPayloadBytes = maximumPayloadBytes
    }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if start > 4096, start > buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The bytes received but not yet decoded into a frame.
    public var pendingByteCount: Int { buffer.count - start }

    /// The next whole frame, nil when more bytes are needed.
    public mutating func next() throws(Failure) -> MCSFrame? {
        var index = start
        if expectsVersion {
            guard index < buffer.count else { return nil }
            let version = buffer[index]
            // Version 41 is current; 38 to 40 are what older clients announce. Anything
            // else is not an MCS client: the connection is closed with the reason.
            guard Self.supportedVersions.contains(version) else { throw .unsupportedVersion(version) }
            peerVersion = version
            expectsVersion = false
            index += 1
            start = index
        }
        guard index < buffer.count else { return nil }
        guard let tag = MCSTag(rawValue: buffer[index]) else { throw .unknownTag(buffer[index]) }
        index += 1
        var length: UInt32 = 0
        var shift: UInt32 = 0
        while true {
            guard index < buffer.count else { return nil }
            let byte = buffer[index]
            index += 1
            guard shift < 35 else { throw .malformedLength }
            length |= UInt32(byte & 0x7F) << shift
            if byte & 0x80 == 0 { break }
            shift += 7
        }
        guard Int(length) <= maximumPayloadBytes else { throw .frameTooLarge(Int(length)) }
        guard buffer.count - index >= Int(length) else { return nil }
        let payload = Array(buffer[index..<index + Int(length)])
        start = index + Int(length)
        if start == buffer.count {
            // Every byte is a frame now: let the storage go, so an idle connection holds none.
            buffer = []
            start = 0
        }
        return MCSFrame(tag: tag, payload: payload)
    }
}
