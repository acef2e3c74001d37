public import SwiftProtobuf

/// The tag byte that says which message an MCS frame carries.
public enum MCSTag: UInt8, Sendable, CaseIterable {
    case heartbeatPing = 0
    case heartbeatAck = 1
    case loginRequest = 2
    case loginResponse = 3
    case close = 4
    case messageStanza = 5
    case presenceStanza = 6
    case iqStanza = 7
    case dataMessageStanza = 8
    case batchPresenceStanza = 9
    case streamErrorStanza = 10
    case httpRequest = 11
    case httpResponse = 12
    case bindAccountRequest = 13
    case bindAccountResponse = 14
    case talkMetadata = 15
}

/// One MCS frame: a tag and the serialized protobuf message it names.
public struct MCSFrame: Sendable, Equatable {
    /// The MCS protocol version this implementation speaks.
    public static let version: UInt8 = 41
    /// The IqStanza extension id of a selective acknowledgement.
    public static let selectiveAckExtension: Int32 = 12
    /// The IqStanza extension id of a stream acknowledgement.
    public static let streamAckExtension: Int32 = 13
    /// Herald's IqStanza extension by which a device reports its state: data `doze` or
    /// `awake` (SEMANTICS D4).
    public static let deviceStateExtension: Int32 = 1001
    /// Herald's IqStanza extension by which an app reports what the user saw: data
    /// `impression <message id>` or `opened <message id>` (SEMANTICS L7).
    public static let receiptExtension: Int32 = 1002
    /// Herald's IqStanza extension by which an app instance is uninstalled: data is its
    /// registration token (SEMANTICS L6).
    public static let unregisterExtension: Int32 = 1003

    /// Which message the payload is.
    public var tag: MCSTag
    /// The serialized message.
    public var payload: [UInt8]

    public init(tag: MCSTag, payload: [UInt8]) {
        self.tag = tag
        self.payload = payload
    }

    /// A frame carrying a protobuf message.
    public init(_ tag: MCSTag, _ message: some SwiftProtobuf.Message) throws {
        self.tag = tag
        self.payload = try message.serializedBytes()
    }

    /// The payload decoded as a protobuf message.
    public func decode<M: SwiftProtobuf.Message>(as type: M.Type = M.self) throws -> M {
        try M(serializedBytes: payload)
    }
}
