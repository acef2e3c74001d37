import Foundation
public import HeraldCore

extension MCSFrame {
    /// The DataMessageStanza that carries a push message to a push channel as a browser
    /// expects it: the channel's app as `category`, its key as `from`, its `subtype`, the
    /// `content-encoding` (and for `aesgcm` the `encryption` and `crypto-key` values) in the
    /// app data, and the encrypted body, unchanged, as raw data.
    public static func webPushStanza(
        _ request: WebPushRequest, category: String, from: String, subtype: String?
    ) -> [UInt8] {
        var stanza = McsProto_DataMessageStanza()
        stanza.id = ""
        stanza.from = from
        stanza.category = category
        var items: [(String, String)] = []
        if let subtype { items.append(("subtype", subtype)) }
        if let encoding = request.contentEncoding { items.append(("content-encoding", encoding)) }
        if let encryption = request.encryption { items.append(("encryption", encryption)) }
        if let cryptoKey = request.cryptoKey { items.append(("crypto-key", cryptoKey)) }
        stanza.appData = items.map { key, value in
            var entry = McsProto_AppData()
            entry.key = key
            entry.value = value
            return entry
        }
        if !request.body.isEmpty { stanza.rawData = Data(request.body) }
        return (try? Array(stanza.serializedData())) ?? []
    }
}
