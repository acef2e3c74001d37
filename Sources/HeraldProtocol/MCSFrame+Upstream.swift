import Foundation
public import HeraldCore

extension MCSFrame {
    /// An IqStanza acknowledging every stanza the device sent up to `lastStreamIDReceived`:
    /// how a device learns that its upstream messages were kept.
    public static func streamAck(lastStreamIDReceived: Int32) -> MCSFrame {
        var extensionMessage = McsProto_Extension()
        extensionMessage.id = streamAckExtension
        extensionMessage.data = Data()
        var iq = McsProto_IqStanza()
        iq.type = .set
        iq.id = ""
        iq.extension = extensionMessage
        iq.lastStreamIDReceived = lastStreamIDReceived
        return (try? MCSFrame(.iqStanza, iq)) ?? MCSFrame(tag: .iqStanza, payload: [])
    }

    /// The stanza telling an app that one of its upstream messages was not sent: app data
    /// `message_type` `send_error`, `google.message_id` and `error`, as FCM's SDKs read it.
    public static func sendErrorStanza(
        messageID: String, error: UpstreamError, category: String, senderID: Int64, token: String
    ) -> [UInt8] {
        var stanza = McsProto_DataMessageStanza()
        stanza.id = ""
        stanza.from = "\(senderID)@\(UpstreamRequest.domain)"
        stanza.to = token
        stanza.category = category
        stanza.appData = [("message_type", "send_error"), ("google.message_id", messageID), ("error", error.rawValue)]
            .map { key, value in
                var entry = McsProto_AppData()
                entry.key = key
                entry.value = value
                return entry
            }
        return (try? Array(stanza.serializedData())) ?? []
    }

    /// The upstream message a device sends, as a DataMessageStanza frame.
    public static func upstream(_ request: UpstreamRequest) -> MCSFrame {
        var stanza = McsProto_DataMessageStanza()
        stanza.id = request.messageID
        stanza.from = ""
        stanza.to = request.to
        stanza.category = request.category
        stanza.regID = request.token
        if let ttl = request.ttlSeconds { stanza.ttl = Int32(clamping: ttl) }
        stanza.appData = request.data.sorted { $0.key < $1.key }.map { key, value in
            var entry = McsProto_AppData()
            entry.key = key
            entry.value = value
            return entry
        }
        return (try? MCSFrame(.dataMessageStanza, stanza)) ?? MCSFrame(tag: .dataMessageStanza, payload: [])
    }

    /// The upstream message a DataMessageStanza from a device carries.
    public static func upstreamRequest(_ stanza: McsProto_DataMessageStanza) -> UpstreamRequest {
        UpstreamRequest(
            messageID: stanza.id, to: stanza.to, category: stanza.category, token: stanza.regID,
            ttlSeconds: stanza.hasTtl ? Int64(stanza.ttl) : nil,
            data: Dictionary(stanza.appData.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last }))
    }
}
