import HeraldCore
import Testing

/// SEMANTICS P2 and D3: each platform reads time to live, priority and collapse key its own way.
@Suite struct DeliveryOptionsTests {
    let now = Timestamp(seconds: 1_800_000_000)

    func options(_ message: String, _ platform: Platform) throws -> DeliveryOptions {
        DeliveryOptions(
            message: try decodeMessage(message), platform: platform, appID: "com.example.app", limits: MessageLimits(),
            now: now)
    }

    @Test func P2_androidReadsTTLPriorityAndCollapseKeyFromItsBlock() throws {
        let o = try options(
            #"{"token":"APA91bt","android":{"ttl":"60s","priority":"high","collapse_key":"k"}}"#, .android)
        #expect(o == DeliveryOptions(ttlSeconds: 60, isHighPriority: true, collapseKey: "k"))
    }

    @Test func P2_appleReadsAnAbsoluteExpiryAndApnsPriority() throws {
        let message =
            #"{"token":"APA91bt","apns":{"headers":{"apns-expiration":"1800000100","apns-priority":"10","apns-collapse-id":"c"}}}"#
        #expect(
            try options(message, .apple) == DeliveryOptions(ttlSeconds: 100, isHighPriority: true, collapseKey: "c"))
        let past = #"{"token":"APA91bt","apns":{"headers":{"apns-expiration":"1700000000"}}}"#
        #expect(try options(past, .apple).ttlSeconds == 0)
    }

    @Test func D6_apnsExpirationZeroMeansNowOrNever() throws {
        #expect(try options(#"{"token":"APA91bt","apns":{"headers":{"apns-expiration":"0"}}}"#, .apple).ttlSeconds == 0)
    }

    @Test func P2_apnsPriorityDefaultsTo10ForNotificationsAnd5ForData() throws {
        #expect(try options(#"{"token":"APA91bt","notification":{"title":"x"}}"#, .apple).isHighPriority)
        #expect(try !options(#"{"token":"APA91bt","data":{"a":"b"}}"#, .apple).isHighPriority)
    }

    @Test func P2_theWebReadsTheTTLUrgencyAndTopicHeaders() throws {
        let message = #"{"token":"APA91bt","webpush":{"headers":{"TTL":"30","Urgency":"high","Topic":"scores"}}}"#
        #expect(
            try options(message, .web) == DeliveryOptions(ttlSeconds: 30, isHighPriority: true, collapseKey: "scores"))
        #expect(try !options(#"{"token":"APA91bt","webpush":{"headers":{"Urgency":"low"}}}"#, .web).isHighPriority)
    }

    @Test func P2_eachPlatformIgnoresTheOthersBlocks() throws {
        let message =
            #"{"token":"APA91bt","android":{"ttl":"5s","priority":"high","collapse_key":"a"},"webpush":{"headers":{"TTL":"7"}}}"#
        #expect(try options(message, .web) == DeliveryOptions(ttlSeconds: 7, isHighPriority: false, collapseKey: nil))
        #expect(try options(message, .apple).ttlSeconds == 2_419_200)
    }

    @Test func D5_anAbsentTTLIsTheMaximum() throws {
        #expect(try options(#"{"token":"APA91bt"}"#, .android).ttlSeconds == 2_419_200)
    }

    @Test func D3_notificationMessagesAreAlwaysCollapsibleUnderTheAppID() throws {
        let message = #"{"token":"APA91bt","notification":{"title":"x"},"android":{"collapse_key":"ignored"}}"#
        #expect(try options(message, .android).collapseKey == "com.example.app")
        #expect(
            try options(#"{"token":"APA91bt","notification":{"title":"x"}}"#, .web).collapseKey == "com.example.app")
        #expect(try options(#"{"token":"APA91bt","data":{"a":"b"}}"#, .android).collapseKey == nil)
    }

    @Test func D3_topicMessagesWithNoPayloadAreCollapsible() throws {
        #expect(try options(#"{"topic":"news"}"#, .android).collapseKey == "com.example.app")
        #expect(try options(#"{"topic":"news","data":{"a":"b"}}"#, .android).collapseKey == nil)
        #expect(try options(#"{"token":"APA91bt"}"#, .android).collapseKey == nil)
    }
}
