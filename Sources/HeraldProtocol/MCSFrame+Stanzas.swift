import Foundation

extension MCSFrame {
    /// An IqStanza carrying a selective acknowledgement of persistent ids.
    public static func selectiveAck(_ ids: [String]) -> MCSFrame {
        var ack = McsProto_SelectiveAck()
        ack.id = ids
        var extensionMessage = McsProto_Extension()
        extensionMessage.id = selectiveAckExtension
        extensionMessage.data = (try? ack.serializedData()) ?? Data()
        var iq = McsProto_IqStanza()
        iq.type = .set
        iq.id = ""
        iq.extension = extensionMessage
        return (try? MCSFrame(.iqStanza, iq)) ?? MCSFrame(tag: .iqStanza, payload: [])
    }

    /// An IqStanza carrying one of Herald's own extensions with text data.
    public static func heraldExtension(_ id: Int32, _ text: String) -> MCSFrame {
        var extensionMessage = McsProto_Extension()
        extensionMessage.id = id
        extensionMessage.data = Data(text.utf8)
        var iq = McsProto_IqStanza()
        iq.type = .set
        iq.id = ""
        iq.extension = extensionMessage
        return (try? MCSFrame(.iqStanza, iq)) ?? MCSFrame(tag: .iqStanza, payload: [])
    }

    /// A LoginRequest for a checked-in device.
    public static func login(
        androidID: UInt64, securityToken: UInt64, receivedPersistentIDs: [String] = [], heartbeatSeconds: Int? = nil,
        clientID: String = "herald-client-1"
    ) -> MCSFrame {
        var login = McsProto_LoginRequest()
        login.id = clientID
        login.domain = "mcs.android.com"
        login.user = String(androidID)
        login.resource = String(androidID)
        login.authToken = String(securityToken)
        login.deviceID = "android-" + String(androidID, radix: 16)
        login.authService = .androidID
        login.useRmq2 = true
        login.adaptiveHeartbeat = false
        var setting = McsProto_Setting()
        setting.name = "new_vc"
        setting.value = "1"
        login.setting = [setting]
        login.receivedPersistentID = receivedPersistentIDs
        if let heartbeatSeconds {
            var heartbeat = McsProto_HeartbeatStat()
            heartbeat.ip = ""
            heartbeat.timeout = false
            heartbeat.intervalMs = Int32(heartbeatSeconds * 1000)
            login.heartbeatStat = heartbeat
        }
        return (try? MCSFrame(.loginRequest, login)) ?? MCSFrame(tag: .loginRequest, payload: [])
    }
}

extension MCSFrame {
    /// A DataMessageStanza frame from a stored, already serialized stanza with the fields
    /// each delivery sets appended: the persistent id, the last stream id received and, for
    /// a "messages deleted" signal, a `total_deleted` app data entry. A parser takes the
    /// last value of a repeated singular field and joins repeated ones, so the stored bytes
    /// are sent as they are instead of being decoded and encoded again.
    public static func dataMessage(
        stored stanza: [UInt8], persistentID: String, lastStreamIDReceived: Int32, totalDeleted: Int? = nil
    ) -> MCSFrame {
        var payload = stanza
        payload.reserveCapacity(stanza.count + persistentID.utf8.count + 48)
        if let totalDeleted {
            var entry: [UInt8] = []
            ProtobufField.appendString(1, "total_deleted", to: &entry)
            ProtobufField.appendString(2, String(totalDeleted), to: &entry)
            ProtobufField.appendBytes(7, entry, to: &payload)
        }
        ProtobufField.appendString(9, persistentID, to: &payload)
        // int32 is encoded as its sign-extended 64-bit two's complement.
        ProtobufField.appendVarint(11, UInt64(bitPattern: Int64(lastStreamIDReceived)), to: &payload)
        return MCSFrame(tag: .dataMessageStanza, payload: payload)
    }
}

/// Protocol buffer fields written by hand, for appending to serialized messages.
enum ProtobufField {
    static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    static func appendVarint(_ field: Int, _ value: UInt64, to bytes: inout [UInt8]) {
        appendVarint(UInt64(field << 3), to: &bytes)
        appendVarint(value, to: &bytes)
    }

    static func appendBytes(_ field: Int, _ value: some Collection<UInt8>, to bytes: inout [UInt8]) {
        appendVarint(UInt64(field << 3 | 2), to: &bytes)
        appendVarint(UInt64(value.count), to: &bytes)
        bytes.append(contentsOf: value)
    }

    static func appendString(_ field: Int, _ value: String, to bytes: inout [UInt8]) {
        appendBytes(field, value.utf8, to: &bytes)
    }
}
