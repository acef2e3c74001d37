import HeraldCore
import Testing

@Suite struct MessageModelTests {
    @Test func snakeCaseAndLowerCamelCaseNormalizeToTheSameMessage() throws {
        let snake = try decodeMessage(
            #"{"topic":"news","android":{"collapse_key":"k","priority":"high","ttl":"3.500000000s","notification":{"click_action":"OPEN","notification_priority":"priority_max"}},"fcm_options":{"analytics_label":"l"}}"#
        )
        let camel = try decodeMessage(
            #"{"topic":"news","android":{"collapseKey":"k","priority":"HIGH","ttl":"3.5s","notification":{"clickAction":"OPEN","notificationPriority":"PRIORITY_MAX"}},"fcmOptions":{"analyticsLabel":"l"}}"#
        )
        #expect(snake == camel)
        #expect(snake.body["android"]?["priority"] == .string("HIGH"))
        #expect(snake.body["android"]?["ttl"] == .string("3s"))
        #expect(snake.androidTTLSeconds == 3)
        #expect(snake.analyticsLabel == "l")
    }

    @Test func everyAndroidNotificationFieldIsAccepted() throws {
        let message = try decodeMessage(
            #"""
            {"token":"abc:APA91bdef","android":{"restricted_package_name":"com.example.app","direct_boot_ok":true,
             "bandwidth_constrained_ok":false,"restricted_satellite_ok":true,"data":{"a":"b"},
             "fcm_options":{"analytics_label":"x"},
             "notification":{"title":"t","body":"b","icon":"i","color":"#aabbcc","sound":"s","tag":"g",
              "click_action":"c","body_loc_key":"bk","body_loc_args":["1"],"title_loc_key":"tk","title_loc_args":["2"],
              "channel_id":"ch","ticker":"tk","sticky":true,"event_time":"2024-01-02T03:04:05.123Z","local_only":false,
              "notification_priority":"PRIORITY_HIGH","default_sound":true,"default_vibrate_timings":false,
              "default_light_settings":true,"vibrate_timings":["0.5s","1s"],"visibility":"private",
              "notification_count":3,"light_settings":{"color":{"red":1,"green":0.5,"blue":0,"alpha":1},
              "light_on_duration":"1s","light_off_duration":"2s"},"image":"https://example.com/a.png",
              "proxy":"allow","bypass_proxy_notification":false}}}
            """#)
        #expect(message.target == .token("abc:APA91bdef"))
        #expect(message.body["android"]?["notification"]?["visibility"] == .string("PRIVATE"))
        #expect(message.body["android"]?["notification"]?["vibrate_timings"] == .array([.string("0s"), .string("1s")]))
        #expect(message.isNotificationMessage)
    }

    @Test func webpushAndAPNsBlocksKeepTheirFreeFormPayloads() throws {
        let message = try decodeMessage(
            #"""
            {"topic":"t","webpush":{"headers":{"TTL":"60","Urgency":"high","Topic":"abc"},"data":{"k":"v"},
              "notification":{"title":"w","actions":[{"action":"a","title":"A"}]},
              "fcm_options":{"link":"https://example.com","analytics_label":"w"}},
             "apns":{"headers":{"apns-priority":"10","apns-expiration":"0","apns-collapse-id":"c"},
              "payload":{"aps":{"alert":{"title":"x","loc-key":"k","loc-args":["a"]},"badge":1},"custom":{"n":1}},
              "fcm_options":{"image":"https://example.com/i.png"},"live_activity_token":"lat"}}
            """#)
        #expect(message.body["webpush"]?["notification"]?["actions"]?.arrayElements?.count == 1)
        #expect(message.body["apns"]?["payload"]?["custom"]?["n"] == .number(1))
        #expect(message.target == .topic("t"))
    }

    @Test func validateOnlyIsReadInBothSpellings() throws {
        #expect(try decode(#"{"message":{"topic":"a"},"validate_only":true}"#).validateOnly)
        #expect(try decode(#"{"message":{"topic":"a"},"validateOnly":true}"#).validateOnly)
        #expect(try !decode(#"{"message":{"topic":"a"}}"#).validateOnly)
    }

    @Test func nullFieldsCountAsAbsent() throws {
        let message = try decodeMessage(#"{"topic":"a","token":null,"notification":null}"#)
        #expect(message.target == .topic("a"))
        #expect(message.notification == nil)
    }

    @Test func topicPrefixIsStripped() throws {
        #expect(try decodeMessage(#"{"topic":"/topics/news"}"#).target == .topic("news"))
    }

    @Test func theBodyHoldsNoTargetOrName() throws {
        let message = try decodeMessage(#"{"name":"projects/p/messages/1","topic":"a","data":{"k":"v"}}"#)
        #expect(message.body == .object([(key: "data", value: .stringObject([("k", "v")]))]))
        #expect(message.data == ["k": "v"])
        #expect(!message.isNotificationMessage)
    }
}
