import HeraldCore
import HeraldProtocol
import Testing

/// A receipt subscription carries the sender it was made for: another sender's key, or
/// none, cannot name it.
@Suite struct ReceiptSubscriptionTests {
    @Test func aSubscriptionBelongsToTheKeyItWasMadeForOnly() {
        let key: [UInt8] = [4] + [UInt8](repeating: 1, count: 64)
        let other: [UInt8] = [4] + [UInt8](repeating: 2, count: 64)
        let subscription = ReceiptSubscription.make(senderKey: key)
        #expect(PushReceipt.isSubscription(subscription))
        #expect(ReceiptSubscription.belongs(subscription, toSenderKey: key))
        #expect(!ReceiptSubscription.belongs(subscription, toSenderKey: other))
        #expect(!ReceiptSubscription.belongs(subscription, toSenderKey: []))
        let keyless = ReceiptSubscription.make(senderKey: [])
        #expect(ReceiptSubscription.belongs(keyless, toSenderKey: []))
        #expect(!ReceiptSubscription.belongs(keyless, toSenderKey: key))
        // A subscription of the old form (16 random bytes) belongs to no one.
        #expect(!ReceiptSubscription.belongs(SecureRandom.token(bytes: 16), toSenderKey: key))
    }
}
