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
