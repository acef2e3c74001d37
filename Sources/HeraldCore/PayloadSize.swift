/// How big a message is as delivered (SEMANTICS M2): the bytes of the data keys and
/// values plus those of the notification keys and values, for each platform the
/// message is tailored to; the largest of these is what the limit applies to.
public enum PayloadSize {
    /// The largest tailored payload of a message, in bytes.
    public static func largest(of message: Message) -> Int {
        let body = message.body
        let common = body["data"]
        let notification = body["notification"]
        let android =
            count(body["android"]?["data"] ?? common) + count(notification)
            + count(body["android"]?["notification"])
        let web =
            count(body["webpush"]?["data"] ?? common) + count(notification)
            + count(body["webpush"]?["notification"])
        let apple = count(common) + count(notification) + count(body["apns"]?["payload"])
        return max(android, web, apple)
    }

    /// The bytes of an object's keys and values: strings count their UTF-8 bytes, other
    /// values their compact JSON text.
    static func count(_ object: JSONValue?) -> Int {
        guard let members = object?.objectMembers else { return 0 }
        var total = 0
        for member in members {
            total += member.key.utf8.count
            if case .string(let text) = member.value {
                total += text.utf8.count
            } else {
                total += member.value.rendered.utf8.count
            }
        }
        return total
    }
}
