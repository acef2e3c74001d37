import HeraldCore
import Testing

/// The legacy HTTP send translated to v1 messages (reference §5), and its answers.
@Suite struct LegacySendRequestTests {
    static let token = "APA91bt"

    private func decode(_ json: String) throws -> LegacySendRequest {
        try LegacySendRequest.decode(json: Array(json.utf8))
    }

    private func message(_ json: String, to target: (String, String) = ("token", token)) throws -> Message {
        try decode(json).message(to: target, limits: MessageLimits())
    }

    private func expectMalformed(
        _ json: String, saying words: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            _ = try decode(json)
            Issue.record("\(json) was accepted", sourceLocation: sourceLocation)
        } catch let error as LegacySendRequest.Malformed {
            #expect(error.description.contains(words), "\(error.description)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(error)", sourceLocation: sourceLocation)
        }
    }

    private func expectResult(
        _ json: String, _ legacyResult: String, to target: (String, String) = ("token", token),
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let request = try decode(json)
        #expect(throws: HeraldError.self, sourceLocation: sourceLocation) {
            _ = try request.message(to: target, limits: MessageLimits())
        }
        do {
            _ = try request.message(to: target, limits: MessageLimits())
        } catch {
            #expect(error.legacyResult == legacyResult, "\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func theTargetsAreRead() throws {
        #expect(try decode(#"{"to":"/topics/news"}"#).audience == .topic("news"))
        #expect(try decode(#"{"to":"APA91bt"}"#).audience == .registrations(["APA91bt"]))
        #expect(try decode(#"{"notification_key":"APA91bk"}"#).audience == .registrations(["APA91bk"]))
        #expect(try decode(#"{"registration_ids":["a","b"]}"#).audience == .registrations(["a", "b"]))
        #expect(try decode(#"{"condition":"'a' in topics"}"#).audience == .condition("'a' in topics"))
        #expect(try decode(#"{"data":{"k":"v"}}"#).audience == .missing)
    }

    @Test func registrationIDsHoldOneToAThousandStrings() throws {
        let thousand = (0..<1000).map { "\"t\($0)\"" }.joined(separator: ",")
        _ = try decode(#"{"registration_ids":[\#(thousand)]}"#)
        expectMalformed(#"{"registration_ids":[\#(thousand),"one-more"]}"#, saying: "exceeds maximum allowed (1000)")
        expectMalformed(#"{"registration_ids":[]}"#, saying: "cannot be empty")
        expectMalformed(#"{"registration_ids":"a"}"#, saying: "must be a JSON array")
        expectMalformed(#"{"registration_ids":[1]}"#, saying: "must hold strings")
    }

    @Test func badJSONAndMistypedFieldsAreMalformed() {
        expectMalformed(#"{"to":"/topics/a","#, saying: "JSON_PARSING_ERROR")
        expectMalformed(#"["to"]"#, saying: "JSON object")
        expectMalformed(#"{"to":5}"#, saying: #"Field "to" must be a JSON string"#)
        expectMalformed(#"{"to":"a","time_to_live":"60"}"#, saying: #"Field "time_to_live" must be a JSON number"#)
        expectMalformed(#"{"to":"a","time_to_live":1.5}"#, saying: "time_to_live")
        expectMalformed(#"{"to":"a","dry_run":"yes"}"#, saying: "dry_run")
        expectMalformed(#"{"to":"a","content_available":1}"#, saying: "content_available")
        expectMalformed(#"{"to":"a","priority":"urgent"}"#, saying: "Invalid priority")
        expectMalformed(#"{"to":"a","data":["x"]}"#, saying: #"Field "data" must be a JSON object"#)
        expectMalformed(#"{"to":"a","notification":{"title":5}}"#, saying: "notification.title")
        expectMalformed(#"{"to":"a","notification":{"badge":"many"}}"#, saying: "notification.badge")
        // Numbers no integer holds are refused, not converted (which would stop the process).
        expectMalformed(#"{"to":"a","notification":{"badge":1e300}}"#, saying: "notification.badge")
        expectMalformed(#"{"to":"a","notification":{"badge":"nan"}}"#, saying: "notification.badge")
        expectMalformed(#"{"to":"a","notification":{"badge":"-inf"}}"#, saying: "notification.badge")
    }

    @Test func P2_theOptionsHoldForEveryPlatform() throws {
        let sent = try message(
            #"{"to":"APA91bt","collapse_key":"score","priority":"high","time_to_live":60,"#
                + #""restricted_package_name":"com.example.app","content_available":true,"mutable_content":true,"#
                + #""delay_while_idle":true}"#)
        #expect(sent.target == .token(Self.token))
        #expect(sent.body["android"]?["collapse_key"] == .string("score"))
        #expect(sent.body["android"]?["priority"] == .string("HIGH"))
        #expect(sent.androidTTLSeconds == 60)
        #expect(sent.body["android"]?["restricted_package_name"] == .string("com.example.app"))
        #expect(sent.body["apns"]?["headers"]?["apns-priority"] == .string("10"))
        #expect(sent.body["apns"]?["headers"]?["apns-collapse-id"] == .string("score"))
        #expect(sent.body["apns"]?["payload"]?["aps"]?["content-available"] == .number(1))
        #expect(sent.body["apns"]?["payload"]?["aps"]?["mutable-content"] == .number(1))
        #expect(sent.body["webpush"]?["headers"]?["TTL"] == .string("60"))
        #expect(sent.body["webpush"]?["headers"]?["Urgency"] == .string("high"))
        #expect(sent.body["webpush"]?["headers"]?["Topic"] == .string("score"))
        let normal = try message(#"{"to":"APA91bt","priority":5,"collapse_key":"not a web topic!"}"#)
        #expect(normal.body["android"]?["priority"] == .string("NORMAL"))
        #expect(normal.body["apns"]?["headers"]?["apns-priority"] == .string("5"))
        #expect(normal.body["webpush"]?["headers"]?["Topic"] == nil)
    }

    @Test func dataValuesBecomeStringsAndNotificationKeysGoWhereV1KeepsThem() throws {
        let sent = try message(
            #"{"to":"APA91bt","data":{"n":1,"s":"x","o":{"a":true}},"notification":{"title":"T","body":"B","#
                + ##""image":"https://example.com/i.png","icon":"ic","sound":"ding","tag":"t","color":"#112233","##
                + #""click_action":"OPEN","title_loc_key":"k","title_loc_args":"[\"a\",2]","#
                + #""android_channel_id":"news","badge":3,"subtitle":"S","unknown":"ignored"}}"#)
        #expect(sent.data == ["n": "1", "s": "x", "o": #"{"a":true}"#])
        #expect(sent.body["notification"]?["title"] == .string("T"))
        #expect(sent.body["notification"]?["image"] == .string("https://example.com/i.png"))
        let android = try #require(sent.body["android"]?["notification"])
        #expect(android["channel_id"] == .string("news"))
        #expect(android["click_action"] == .string("OPEN"))
        #expect(android["title_loc_args"] == .array([.string("a"), .string("2")]))
        #expect(android["unknown"] == nil)
        let aps = try #require(sent.body["apns"]?["payload"]?["aps"])
        #expect(aps["badge"] == .number(3))
        #expect(aps["sound"] == .string("ding"))
        #expect(aps["alert"]?["subtitle"] == .string("S"))
        #expect(sent.isNotificationMessage)
    }

    @Test func anEmptyNotificationLeavesADataMessage() throws {
        let sent = try message(#"{"to":"APA91bt","notification":{},"data":{"k":"v"}}"#)
        #expect(!sent.isNotificationMessage)
        #expect(sent.body["notification"] == nil)
    }

    @Test func D5_theTimeToLiveIs0To2419200SecondsOrInvalidTtl() throws {
        #expect(try message(#"{"to":"APA91bt","time_to_live":0}"#).androidTTLSeconds == 0)
        #expect(try message(#"{"to":"APA91bt","time_to_live":2419200}"#).androidTTLSeconds == 2_419_200)
        try expectResult(#"{"to":"APA91bt","time_to_live":2419201}"#, "InvalidTtl")
        try expectResult(#"{"to":"APA91bt","time_to_live":-1}"#, "InvalidTtl")
    }

    @Test func M2_eachRuleOfAV1MessageIsAnsweredWithItsLegacyName() throws {
        try expectResult(#"{"to":"APA91bt","data":{"from":"x"}}"#, "InvalidDataKey")
        try expectResult(#"{"to":"APA91bt","data":{"google.x":"x"}}"#, "InvalidDataKey")
        let big = String(repeating: "x", count: 4097)
        try expectResult(#"{"to":"APA91bt","data":{"k":"\#(big)"}}"#, "MessageTooBig")
        try expectResult(#"{"to":"APA91bt","restricted_package_name":"not a package"}"#, "InvalidPackageName")
        try expectResult(#"{"to":"APA91bt"}"#, "InvalidRegistration", to: ("token", "no token"))
        try expectResult(#"{"to":"/topics/a b"}"#, "InvalidParameters", to: ("topic", "a b"))
        try expectResult(#"{"condition":"'a' in"}"#, "InvalidParameters", to: ("condition", "'a' in"))
    }

    @Test func thePlainTextFormCarriesOneTokenItsOptionsAndData() throws {
        let request = try LegacySendRequest.decode(form: [
            "registration_id": "APA91bt", "collapse_key": "c", "time_to_live": "30", "dry_run": "1",
            "data.b": "2", "data.a": "1", "delay_while_idle": "1",
        ])
        #expect(request.audience == .registrations(["APA91bt"]))
        #expect(request.dryRun)
        let sent = try request.message(to: ("token", "APA91bt"), limits: MessageLimits())
        #expect(sent.data == ["a": "1", "b": "2"])
        #expect(sent.androidTTLSeconds == 30)
        #expect(try LegacySendRequest.decode(form: ["data.k": "v"]).audience == .missing)
        #expect(throws: LegacySendRequest.Malformed.self) {
            try LegacySendRequest.decode(form: ["registration_id": "t", "time_to_live": "soon"])
        }
    }

    @Test func theAnswersHaveFCMsShapes() throws {
        let multicast = LegacySendAnswer.registrations(
            multicastID: 9_007_199_254_740_991, [.sent(messageID: "0:1%ab"), .failed("NotRegistered")])
        #expect(
            multicast.json.rendered
                == #"{"multicast_id":9007199254740991,"success":1,"failure":1,"canonical_ids":0,"#
                + #""results":[{"message_id":"0:1%ab"},{"error":"NotRegistered"}]}"#)
        #expect(multicast.plainText == "id=0:1%ab\n")
        #expect(
            LegacySendAnswer.topic(.sent(messageID: "0:1795721068087577%ab12")).json.rendered
                == #"{"message_id":1795721068087577}"#)
        #expect(
            LegacySendAnswer.topic(.failed("TopicsMessageRateExceeded")).json.rendered
                == #"{"error":"TopicsMessageRateExceeded"}"#)
        #expect(LegacySendAnswer.topic(.failed("NotRegistered")).plainText == "Error=NotRegistered\n")
        #expect(LegacySendAnswer.group(success: 2, failedTokens: []).json.rendered == #"{"success":2,"failure":0}"#)
        #expect(
            LegacySendAnswer.group(success: 0, failedTokens: ["a"]).json.rendered
                == #"{"success":0,"failure":1,"failed_registration_ids":["a"]}"#)
        for _ in 0..<100 {
            #expect((1..<(Int64(1) << 53)).contains(LegacySendAnswer.makeMulticastID()))
        }
    }
}
