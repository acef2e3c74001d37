/// Message ids in FCM's form, `0:<microseconds>%<16 hex digits>`: unique, roughly
/// time-ordered, and unguessable.
public enum MessageID {
    /// A new message id for a message accepted at the given time.
    public static func make(at time: Timestamp) -> String {
        "0:\(time.milliseconds * 1000 + Int64.random(in: 0..<1000))%\(SecureRandom.hex(bytes: 8))"
    }

    /// The id FCM answers dry runs with.
    public static let dryRun = "fake_message_id"
}
