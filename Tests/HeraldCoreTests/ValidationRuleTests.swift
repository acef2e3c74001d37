import HeraldCore
import Testing

/// One test per validation rule FCM applies to a v1 `Message`, named with its SEMANTICS id
/// where it has one.
@Suite struct ValidationRuleTests {
    @Test func M2_payloadOf4096BytesIsAcceptedAndOneMoreIsRefused() throws {
        // "k" (1 byte) + value: 4096 bytes in all.
        let fits = #"{"token":"APA91bt","data":{"k":"\#(String(repeating: "x", count: 4095))"}}"#
        _ = try decodeMessage(fits)
        let over = #"{"token":"APA91bt","data":{"k":"\#(String(repeating: "x", count: 4096))"}}"#
        expectInvalid(over, field: "message", legacy: "MessageTooBig")
    }

    @Test func M2_notificationKeysAndValuesCountToo() {
        let half = String(repeating: "y", count: 2100)
        expectInvalid(
            #"{"token":"APA91bt","data":{"k":"\#(half)"},"notification":{"title":"\#(half)"}}"#, field: "message")
    }

    @Test func M2_topicAndConditionMessagesAreLimitedTo2048Bytes() throws {
        let value = String(repeating: "x", count: 2100)
        expectInvalid(#"{"topic":"news","data":{"k":"\#(value)"}}"#, field: "message")
        expectInvalid(#"{"condition":"'a' in topics","data":{"k":"\#(value)"}}"#, field: "message")
        _ = try decodeMessage(#"{"token":"APA91bt","data":{"k":"\#(value)"}}"#)
    }

    @Test func M2_theLimitIsAProjectSetting() throws {
        var limits = MessageLimits()
        limits.maximumPayloadBytes = 10
        #expect(throws: HeraldError.self) {
            try decode(#"{"message":{"token":"APA91bt","data":{"key":"12345678"}}}"#, limits: limits)
        }
        _ = try decode(#"{"message":{"token":"APA91bt","data":{"key":"1234567"}}}"#, limits: limits)
    }

    @Test(arguments: [
        "from", "notification", "message_type", "google.sent_time", "googleX", "gcm.n.e", "gcm", "GCM_X", "",
    ])
    func M3_reservedDataKeysAreRefused(_ key: String) {
        expectInvalid(#"{"token":"APA91bt","data":{"\#(key)":"v"}}"#, field: "message.data", legacy: "InvalidDataKey")
        expectInvalid(#"{"token":"APA91bt","android":{"data":{"\#(key)":"v"}}}"#, field: "message.android.data")
        expectInvalid(#"{"token":"APA91bt","webpush":{"data":{"\#(key)":"v"}}}"#, field: "message.webpush.data")
    }

    @Test func M3_aDataKeyWithU0000IsRefused() {
        expectInvalid(#"{"token":"APA91bt","data":{"a\u0000b":"v"}}"#, field: "message.data", legacy: "InvalidDataKey")
    }

    @Test func M3_ordinaryKeysThatMerelyContainReservedWordsAreFine() throws {
        _ = try decodeMessage(#"{"token":"APA91bt","data":{"my_from":"v","collapse_key":"v","agcm":"v"}}"#)
    }

    @Test func M3_dataValuesMustBeStrings() {
        expectInvalid(#"{"token":"APA91bt","data":{"n":1}}"#, field: "message.data[0].value")
        expectInvalid(#"{"token":"APA91bt","data":{"a":"b","n":true}}"#, field: "message.data[1].value")
        expectInvalid(#"{"token":"APA91bt","data":["a"]}"#, field: "message.data")
    }

    @Test(arguments: ["0s", "1s", "2419200s", "2419200.999999999s", "86400.5s"])
    func D5_ttlWithinZeroTo28DaysIsAccepted(_ ttl: String) throws {
        _ = try decodeMessage(#"{"token":"APA91bt","android":{"ttl":"\#(ttl)"}}"#)
    }

    @Test(arguments: ["2419201s", "-1s", "-0.5s"])
    func D5_ttlOutsideZeroTo28DaysIsRefused(_ ttl: String) {
        expectInvalid(
            #"{"token":"APA91bt","android":{"ttl":"\#(ttl)"}}"#, field: "message.android.ttl", legacy: "InvalidTtl")
    }

    @Test(arguments: ["10", "10m", "s", "1.s", "1.1234567890s", "abc", "1e3s"])
    func D5_ttlMustBeADurationString(_ ttl: String) {
        expectInvalid(#"{"token":"APA91bt","android":{"ttl":"\#(ttl)"}}"#, field: "message.android.ttl")
    }

    @Test func D5_ttlAsANumberIsRefused() {
        expectInvalid(#"{"token":"APA91bt","android":{"ttl":60}}"#, field: "message.android.ttl")
    }

    @Test func D5_webTTLHeaderIsCheckedToo() {
        expectInvalid(#"{"token":"APA91bt","webpush":{"headers":{"TTL":"2419201"}}}"#, field: "message.webpush.headers")
        expectInvalid(#"{"token":"APA91bt","webpush":{"headers":{"ttl":"soon"}}}"#, field: "message.webpush.headers")
        expectInvalid(
            #"{"token":"APA91bt","webpush":{"headers":{"Urgency":"urgent"}}}"#, field: "message.webpush.headers")
    }

    @Test func exactlyOneTargetIsRequired() {
        expectInvalid(#"{"data":{"a":"b"}}"#, field: "message", legacy: "MissingRegistration")
        expectInvalid(#"{"token":"APA91bt","topic":"a"}"#, field: "message")
        expectInvalid(#"{"topic":"a","condition":"'a' in topics"}"#, field: "message")
        expectInvalid(#"{"fid":"f","token":"APA91bt"}"#, field: "message")
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
        _ = try decodeMessage(#"{"token":"APA91bt","fcm_options":{"analytics_label":"\#(label)"}}"#)
    }

    @Test(arguments: ["", "with space", String(repeating: "l", count: 51), "a/b"])
    func analyticsLabelsMustMatchThePattern(_ label: String) {
        expectInvalid(
            #"{"token":"APA91bt","fcm_options":{"analytics_label":"\#(label)"}}"#,
            field: "message.fcm_options.analytics_label")
        expectInvalid(
            #"{"token":"APA91bt","android":{"fcm_options":{"analytics_label":"\#(label)"}}}"#,
            field: "message.android.fcm_options.analytics_label")
    }

    @Test(arguments: ["red", "#fff", "#aabbccdd", "aabbcc", "#gg0000"])
    func colorsMustBeHashRRGGBB(_ color: String) {
        expectInvalid(
            #"{"token":"APA91bt","android":{"notification":{"color":"\#(color)"}}}"#,
            field: "message.android.notification.color")
    }

    @Test func colorsInHashRRGGBBAreAccepted() throws {
        _ = try decodeMessage(##"{"token":"APA91bt","android":{"notification":{"color":"#A1b2C3"}}}"##)
    }

    @Test func localizationArgumentsNeedTheirKey() {
        expectInvalid(
            #"{"token":"APA91bt","android":{"notification":{"body_loc_args":["a"]}}}"#,
            field: "message.android.notification.body_loc_key")
        expectInvalid(
            #"{"token":"APA91bt","android":{"notification":{"title_loc_args":["a"]}}}"#,
            field: "message.android.notification.title_loc_key")
        expectInvalid(
            #"{"token":"APA91bt","apns":{"payload":{"aps":{"alert":{"loc-args":["a"]}}}}}"#,
            field: "message.apns.payload.aps.alert")
    }

    @Test func apnsCollapseIDIsAtMost64Bytes() throws {
        _ = try decodeMessage(
            #"{"token":"APA91bt","apns":{"headers":{"apns-collapse-id":"\#(String(repeating: "c", count: 64))"}}}"#)
        expectInvalid(
            #"{"token":"APA91bt","apns":{"headers":{"apns-collapse-id":"\#(String(repeating: "c", count: 65))"}}}"#,
            field: "message.apns.headers")
    }

    @Test func apnsPriorityAndExpirationAreChecked() {
        expectInvalid(#"{"token":"APA91bt","apns":{"headers":{"apns-priority":"7"}}}"#, field: "message.apns.headers")
        expectInvalid(
            #"{"token":"APA91bt","apns":{"headers":{"apns-expiration":"tomorrow"}}}"#, field: "message.apns.headers")
    }

    @Test func unknownFieldsAreRefusedByName() {
        let error = validationError(#"{"token":"APA91bt","android":{"colapse_key":"k"}}"#)
        #expect(error?.fieldViolations.first?.field == "message.android")
        #expect(error?.message.contains("\"colapse_key\"") == true)
        expectInvalid(#"{"token":"APA91bt","priority":"high"}"#, field: "message")
        #expect(throws: HeraldError.self) { try decode(#"{"message":{"token":"APA91bt"},"dry_run":true}"#) }
    }

    @Test func enumValuesAreCheckedInAnyCase() {
        expectInvalid(#"{"token":"APA91bt","android":{"priority":"urgent"}}"#, field: "message.android.priority")
        // An enumeration's number past every integer (found by FuzzMessage) is refused, not converted.
        expectInvalid(
            #"{"token":"APA91bt","android":{"priority":99999999999999999999999}}"#, field: "message.android.priority")
        expectInvalid(#"{"token":"APA91bt","android":{"priority":2}}"#, field: "message.android.priority")
        expectInvalid(
            #"{"token":"APA91bt","android":{"notification":{"visibility":"hidden"}}}"#,
            field: "message.android.notification.visibility")
    }

    @Test func fieldTypesAreChecked() {
        expectInvalid(
            #"{"token":"APA91bt","android":{"direct_boot_ok":"yes"}}"#, field: "message.android.direct_boot_ok")
        expectInvalid(#"{"token":"APA91bt","notification":{"title":5}}"#, field: "message.notification.title")
        expectInvalid(
            #"{"token":"APA91bt","android":{"notification":{"notification_count":1.5}}}"#,
            field: "message.android.notification.notification_count")
        expectInvalid(
            #"{"token":"APA91bt","android":{"notification":{"event_time":"yesterday"}}}"#,
            field: "message.android.notification.event_time")
        expectInvalid(#"{"token":"APA91bt","apns":{"payload":"x"}}"#, field: "message.apns.payload")
    }

    @Test func lightSettingsNeedAllThreeFields() {
        expectInvalid(
            #"{"token":"APA91bt","android":{"notification":{"light_settings":{"light_on_duration":"1s","light_off_duration":"1s"}}}}"#,
            field: "message.android.notification.light_settings.color")
        expectInvalid(
            #"{"token":"APA91bt","android":{"notification":{"light_settings":{"color":{"red":2},"light_on_duration":"1s","light_off_duration":"1s"}}}}"#,
            field: "message.android.notification.light_settings.color.red")
    }

    @Test func webpushLinkMustBeHTTPS() {
        expectInvalid(
            #"{"token":"APA91bt","webpush":{"fcm_options":{"link":"http://example.com"}}}"#,
            field: "message.webpush.fcm_options.link")
    }

    @Test func imagesMustBeURLs() {
        expectInvalid(#"{"token":"APA91bt","notification":{"image":"not a url"}}"#, field: "message.notification.image")
    }

    @Test func registrationTokensMustBeWellFormed() {
        expectInvalid(#"{"token":""}"#, field: "message.token", legacy: "InvalidRegistration")
        expectInvalid(#"{"token":"has space"}"#, field: "message.token")
        expectInvalid(#"{"token":"not-a-token"}"#, field: "message.token", legacy: "InvalidRegistration")
        expectInvalid(#"{"token":"INVALID_TOKEN"}"#, field: "message.token")
    }

    @Test func aTokenIsWellFormedInTheShapesFCMAndHeraldGiveIt() {
        let wellFormed = [
            Registration.makeToken(), DeviceGroup.makeKey(),
            "fGw0qy4TGgk:APA91bGtWGjuhp4WRhHXgbabIYp1jxEKI08ofj_v1bKhWAGJQ4e3arRCWzeTf",
            "APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx", "t:APA91bt",
        ]
        for token in wellFormed { #expect(RegistrationTokenFormat.isWellFormed(token), "\(token)") }
        let malformed = [
            "", "not-a-token", "INVALID_TOKEN", "APA91b", "x:APA91b", ":APA91bx", "a:b:APA91bx", "x:apa91bx",
            "x:APA91b x", "x:APA91b=", String(repeating: "a", count: 65) + ":APA91bx",
            "APA91b" + String(repeating: "a", count: 4091),
        ]
        for token in malformed { #expect(!RegistrationTokenFormat.isWellFormed(token), "\(token)") }
    }

    @Test func restrictedPackageNamesMustBePackageNames() {
        expectInvalid(
            #"{"token":"APA91bt","android":{"restricted_package_name":"com..x"}}"#,
            field: "message.android.restricted_package_name", legacy: "InvalidPackageName")
    }

    @Test func malformedJSONIsInvalidArgument() {
        #expect(throws: HeraldError.invalidArgument("Invalid JSON payload received. expected a member name at byte 1."))
        {
            try decode("{x")
        }
    }
}
