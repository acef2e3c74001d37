import HeraldCore
import Testing

/// One test per validation rule FCM applies to a v1 `Message`, named with its SEMANTICS id
/// where it has one.
@Suite struct ValidationRuleTests {
    @Test func M2_payloadOf4096BytesIsAcceptedAndOneMoreIsRefused() throws {
        // "k" (1 byte) + value: 4096 bytes in all.
        let fits = #"{"token":"t","data":{"k":"\#(String(repeating: "x", count: 4095))"}}"#
        _ = try decodeMessage(fits)
        let over = #"{"token":"t","data":{"k":"\#(String(repeating: "x", count: 4096))"}}"#
        expectInvalid(over, field: "message", legacy: "MessageTooBig")
    }

    @Test func M2_notificationKeysAndValuesCountToo() {
        let half = String(repeating: "y", count: 2100)
        expectInvalid(#"{"token":"t","data":{"k":"\#(half)"},"notification":{"title":"\#(half)"}}"#, field: "message")
    }

    @Test func M2_topicAndConditionMessagesAreLimitedTo2048Bytes() throws {
        let value = String(repeating: "x", count: 2100)
        expectInvalid(#"{"topic":"news","data":{"k":"\#(value)"}}"#, field: "message")
        expectInvalid(#"{"condition":"'a' in topics","data":{"k":"\#(value)"}}"#, field: "message")
        _ = try decodeMessage(#"{"token":"t","data":{"k":"\#(value)"}}"#)
    }

    @Test func M2_theLimitIsAProjectSetting() throws {
        var limits = MessageLimits()
        limits.maximumPayloadBytes = 10
        #expect(throws: HeraldError.self) {
            try decode(#"{"message":{"token":"t","data":{"key":"12345678"}}}"#, limits: limits)
        }
        _ = try decode(#"{"message":{"token":"t","data":{"key":"1234567"}}}"#, limits: limits)
    }

    @Test(arguments: [
        "from", "notification", "message_type", "google.sent_time", "googleX", "gcm.n.e", "gcm", "GCM_X", "",
    ])
    func M3_reservedDataKeysAreRefused(_ key: String) {
        expectInvalid(#"{"token":"t","data":{"\#(key)":"v"}}"#, field: "message.data", legacy: "InvalidDataKey")
        expectInvalid(#"{"token":"t","android":{"data":{"\#(key)":"v"}}}"#, field: "message.android.data")
        expectInvalid(#"{"token":"t","webpush":{"data":{"\#(key)":"v"}}}"#, field: "message.webpush.data")
    }

    @Test func M3_ordinaryKeysThatMerelyContainReservedWordsAreFine() throws {
        _ = try decodeMessage(#"{"token":"t","data":{"my_from":"v","collapse_key":"v","agcm":"v"}}"#)
    }

    @Test func M3_dataValuesMustBeStrings() {
        expectInvalid(#"{"token":"t","data":{"n":1}}"#, field: "message.data[0].value")
        expectInvalid(#"{"token":"t","data":{"a":"b","n":true}}"#, field: "message.data[1].value")
        expectInvalid(#"{"token":"t","data":["a"]}"#, field: "message.data")
    }

    @Test(arguments: ["0s", "1s", "2419200s", "2419200.999999999s", "86400.5s"])
    func D5_ttlWithinZeroTo28DaysIsAccepted(_ ttl: String) throws {
        _ = try decodeMessage(#"{"token":"t","android":{"ttl":"\#(ttl)"}}"#)
    }

    @Test(arguments: ["2419201s", "-1s", "-0.5s"])
    func D5_ttlOutsideZeroTo28DaysIsRefused(_ ttl: String) {
        expectInvalid(#"{"token":"t","android":{"ttl":"\#(ttl)"}}"#, field: "message.android.ttl", legacy: "InvalidTtl")
    }

    @Test(arguments: ["10", "10m", "s", "1.s", "1.1234567890s", "abc", "1e3s"])
    func D5_ttlMustBeADurationString(_ ttl: String) {
        expectInvalid(#"{"token":"t","android":{"ttl":"\#(ttl)"}}"#, field: "message.android.ttl")
    }

    @Test func D5_ttlAsANumberIsRefused() {
        expectInvalid(#"{"token":"t","android":{"ttl":60}}"#, field: "message.android.ttl")
    }

    @Test func D5_webTTLHeaderIsCheckedToo() {
        expectInvalid(#"{"token":"t","webpush":{"headers":{"TTL":"2419201"}}}"#, field: "message.webpush.headers")
        expectInvalid(#"{"token":"t","webpush":{"headers":{"ttl":"soon"}}}"#, field: "message.webpush.headers")
        expectInvalid(#"{"token":"t","webpush":{"headers":{"Urgency":"urgent"}}}"#, field: "message.webpush.headers")
    }

    @Test func exactlyOneTargetIsRequired() {
        expectInvalid(#"{"data":{"a":"b"}}"#, field: "message", legacy: "MissingRegistration")
        expectInvalid(#"{"token":"t","topic":"a"}"#, field: "message")
        expectInvalid(#"{"topic":"a","condition":"'a' in topics"}"#, field: "message")
        expectInvalid(#"{"fid":"f","token":"t"}"#, field: "message")
    }

    @Test func aMissingMessageIsRefused() {
        #expect(throws: HeraldError.self) { try decode(#"{"validate_only":true}"#) }
    }

    @Test(arguments: ["", "a b", "a/b", "ü", String(repeating: "a", count: 901), "/topics/"])
    func topicNamesMustMatchTheTopicPattern(_ name: String) {
        expectInvalid(#"{"topic":"\#(name)"}"#, field: "message.topic")
    }

    @Test(arguments: ["a", "A-Z_0.9~%", String(repeating: "a", count: 900)])
    func validTopicNamesAreAccepted(_ name: String) throws {
        #expect(try decodeMessage(#"{"topic":"\#(name)"}"#).target == .topic(name))
    }

    @Test func conditionsNameAtMostFiveTopics() throws {
        let five = (1...5).map { "'t\($0)' in topics" }.joined(separator: " || ")
        _ = try decodeMessage(#"{"condition":"\#(five)"}"#)
        let six = (1...6).map { "'t\($0)' in topics" }.joined(separator: " || ")
        expectInvalid(#"{"condition":"\#(six)"}"#, field: "message.condition")
    }

    @Test(arguments: [
        "'a' in topic", "'a' topics", "a in topics", "('a' in topics", "'a' in topics &&",
        "'a' in topics & 'b' in topics", "'a b' in topics",
    ])
    func malformedConditionsAreRefused(_ condition: String) {
        expectInvalid(#"{"condition":"\#(condition)"}"#, field: "message.condition")
    }

    @Test(arguments: ["x", "label-1_2.3~%", String(repeating: "l", count: 50)])
    func analyticsLabelsMatchingThePatternAreAccepted(_ label: String) throws {
        _ = try decodeMessage(#"{"token":"t","fcm_options":{"analytics_label":"\#(label)"}}"#)
    }

    @Test(arguments: ["", "with space", String(repeating: "l", count: 51), "a/b"])
    func analyticsLabelsMustMatchThePattern(_ label: String) {
        expectInvalid(
            #"{"token":"t","fcm_options":{"analytics_label":"\#(label)"}}"#,
            field: "message.fcm_options.analytics_label")
        expectInvalid(
            #"{"token":"t","android":{"fcm_options":{"analytics_label":"\#(label)"}}}"#,
            field: "message.android.fcm_options.analytics_label")
    }

    @Test(arguments: ["red", "#fff", "#aabbccdd", "aabbcc", "#gg0000"])
    func colorsMustBeHashRRGGBB(_ color: String) {
        expectInvalid(
            #"{"token":"t","android":{"notification":{"color":"\#(color)"}}}"#,
            field: "message.android.notification.color")
    }

    @Test func colorsInHashRRGGBBAreAccepted() throws {
        _ = try decodeMessage(##"{"token":"t","android":{"notification":{"color":"#A1b2C3"}}}"##)
    }

    @Test func localizationArgumentsNeedTheirKey() {
        expectInvalid(
            #"{"token":"t","android":{"notification":{"body_loc_args":["a"]}}}"#,
            field: "message.android.notification.body_loc_key")
        expectInvalid(
            #"{"token":"t","android":{"notification":{"title_loc_args":["a"]}}}"#,
            field: "message.android.notification.title_loc_key")
        expectInvalid(
            #"{"token":"t","apns":{"payload":{"aps":{"alert":{"loc-args":["a"]}}}}}"#,
            field: "message.apns.payload.aps.alert")
    }

    @Test func apnsCollapseIDIsAtMost64Bytes() throws {
        _ = try decodeMessage(
            #"{"token":"t","apns":{"headers":{"apns-collapse-id":"\#(String(repeating: "c", count: 64))"}}}"#)
        expectInvalid(
            #"{"token":"t","apns":{"headers":{"apns-collapse-id":"\#(String(repeating: "c", count: 65))"}}}"#,
            field: "message.apns.headers")
    }

    @Test func apnsPriorityAndExpirationAreChecked() {
        expectInvalid(#"{"token":"t","apns":{"headers":{"apns-priority":"7"}}}"#, field: "message.apns.headers")
        expectInvalid(
            #"{"token":"t","apns":{"headers":{"apns-expiration":"tomorrow"}}}"#, field: "message.apns.headers")
    }

    @Test func unknownFieldsAreRefusedByName() {
        let error = validationError(#"{"token":"t","android":{"colapse_key":"k"}}"#)
        #expect(error?.fieldViolations.first?.field == "message.android")
        #expect(error?.message.contains("\"colapse_key\"") == true)
        expectInvalid(#"{"token":"t","priority":"high"}"#, field: "message")
        #expect(throws: HeraldError.self) { try decode(#"{"message":{"token":"t"},"dry_run":true}"#) }
    }

    @Test func enumValuesAreCheckedInAnyCase() {
        expectInvalid(#"{"token":"t","android":{"priority":"urgent"}}"#, field: "message.android.priority")
        expectInvalid(
            #"{"token":"t","android":{"notification":{"visibility":"hidden"}}}"#,
            field: "message.android.notification.visibility")
    }

    @Test func fieldTypesAreChecked() {
        expectInvalid(#"{"token":"t","android":{"direct_boot_ok":"yes"}}"#, field: "message.android.direct_boot_ok")
        expectInvalid(#"{"token":"t","notification":{"title":5}}"#, field: "message.notification.title")
        expectInvalid(
            #"{"token":"t","android":{"notification":{"notification_count":1.5}}}"#,
            field: "message.android.notification.notification_count")
        expectInvalid(
            #"{"token":"t","android":{"notification":{"event_time":"yesterday"}}}"#,
            field: "message.android.notification.event_time")
        expectInvalid(#"{"token":"t","apns":{"payload":"x"}}"#, field: "message.apns.payload")
    }

    @Test func lightSettingsNeedAllThreeFields() {
        expectInvalid(
            #"{"token":"t","android":{"notification":{"light_settings":{"light_on_duration":"1s","light_off_duration":"1s"}}}}"#,
            field: "message.android.notification.light_settings.color")
        expectInvalid(
            #"{"token":"t","android":{"notification":{"light_settings":{"color":{"red":2},"light_on_duration":"1s","light_off_duration":"1s"}}}}"#,
            field: "message.android.notification.light_settings.color.red")
    }

    @Test func webpushLinkMustBeHTTPS() {
        expectInvalid(
            #"{"token":"t","webpush":{"fcm_options":{"link":"http://example.com"}}}"#,
            field: "message.webpush.fcm_options.link")
    }

    @Test func imagesMustBeURLs() {
        expectInvalid(#"{"token":"t","notification":{"image":"not a url"}}"#, field: "message.notification.image")
    }

    @Test func registrationTokensMustBeWellFormed() {
        expectInvalid(#"{"token":""}"#, field: "message.token", legacy: "InvalidRegistration")
        expectInvalid(#"{"token":"has space"}"#, field: "message.token")
    }

    @Test func restrictedPackageNamesMustBePackageNames() {
        expectInvalid(
            #"{"token":"t","android":{"restricted_package_name":"com..x"}}"#,
            field: "message.android.restricted_package_name", legacy: "InvalidPackageName")
    }

    @Test func malformedJSONIsInvalidArgument() {
        #expect(throws: HeraldError.invalidArgument("Invalid JSON payload received. expected a member name at byte 1."))
        {
            try decode("{x")
        }
    }
}
