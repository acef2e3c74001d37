import HeraldCore
import HeraldProtocol
import Testing

/// Mozilla's push protocol's messages as Firefox and Sunup send them (WIRE.md §8b).
@Suite struct MozillaPushMessageTests {
    func parse(_ text: String) throws(MozillaPushMessage.Failure) -> MozillaPushMessage {
        try MozillaPushMessage.parse(Array(text.utf8))
    }

    @Test func readsEachMessageFirefoxSends() throws {
        #expect(try parse(#"{"messageType":"hello","broadcasts":{},"use_webpush":true}"#) == .hello(uaid: nil))
        #expect(
            try parse(#"{"messageType":"hello","uaid":"0123456789abcdef0123456789abcdef","use_webpush":true}"#)
                == .hello(uaid: "0123456789abcdef0123456789abcdef"))
        let channel = "e945b639-94df-457e-8e51-631d29956ce9"
        #expect(
            try parse(#"{"channelID":"\#(channel)","messageType":"register","key":"BB8s"}"#)
                == .register(channelID: channel, key: "BB8s"))
        #expect(
            try parse(#"{"messageType":"register","channelID":"\#(channel)"}"#)
                == .register(channelID: channel, key: nil))
        #expect(
            try parse(#"{"messageType":"unregister","channelID":"\#(channel)","code":200}"#)
                == .unregister(channelID: channel))
        #expect(
            try parse(#"{"messageType":"ack","updates":[{"channelID":"\#(channel)","version":"v1","code":100}]}"#)
                == .ack(["v1"]))
        #expect(try parse(#"{"messageType":"nack","version":"v1","code":301}"#) == .nack(version: "v1"))
        #expect(try parse("{}") == .ping)
        #expect(try parse(#"{"messageType":"broadcast_subscribe","broadcasts":{"a":"1"}}"#) == .broadcastSubscribe)
    }

    @Test func refusesWhatIsNotOfTheProtocol() {
        #expect(throws: MozillaPushMessage.Failure.notJSON) { try parse("hello") }
        #expect(throws: MozillaPushMessage.Failure.notJSON) { try parse("[1]") }
        #expect(throws: MozillaPushMessage.Failure.missingField("messageType")) { try parse(#"{"uaid":"x"}"#) }
        #expect(throws: MozillaPushMessage.Failure.unknownType("purge")) { try parse(#"{"messageType":"purge"}"#) }
        // autopush takes a channel id only in its lower-case, dashed form.
        #expect(throws: MozillaPushMessage.Failure.invalidChannelID("E945B639-94DF-457E-8E51-631D29956CE9")) {
            try parse(#"{"messageType":"register","channelID":"E945B639-94DF-457E-8E51-631D29956CE9"}"#)
        }
        #expect(throws: MozillaPushMessage.Failure.invalidChannelID("e945b63994df457e8e51631d29956ce9")) {
            try parse(#"{"messageType":"register","channelID":"e945b63994df457e8e51631d29956ce9"}"#)
        }
        let updates = Array(repeating: #"{"channelID":"c","version":"v"}"#, count: 101).joined(separator: ",")
        #expect(throws: MozillaPushMessage.Failure.missingField("updates")) {
            try parse(#"{"messageType":"ack","updates":[\#(updates)]}"#)
        }
    }

    @Test func repliesAsAutopushDoes() throws {
        let hello = try JSONParser.parse(MozillaPushReply.hello(uaid: "u"))
        #expect(hello["messageType"] == .string("hello"))
        #expect(hello["status"] == .number(200))
        #expect(hello["use_webpush"] == .bool(true))
        let note = try JSONParser.parse(
            MozillaPushReply.notification(
                channelID: "c", version: "v", body: [1, 2, 3], encoding: "aesgcm", cryptoKey: "dh=x",
                encryption: "salt=y"))
        #expect(note["data"] == .string("AQID"))
        #expect(note["headers"]?["encoding"] == .string("aesgcm"))
        #expect(note["headers"]?["crypto_key"] == .string("dh=x"))
        #expect(note["headers"]?["encryption"] == .string("salt=y"))
        // A push without a body has neither data nor headers.
        let empty = try JSONParser.parse(
            MozillaPushReply.notification(
                channelID: "c", version: "v", body: [], encoding: nil, cryptoKey: nil, encryption: nil))
        #expect(empty["data"] == nil && empty["headers"] == nil)
    }

    @Test func uaidIsTheDevicesCredential() {
        let uaid = MozillaPushUAID.make(androidID: 0x0123_4567_89ab_cdef, securityToken: 42)
        #expect(uaid == "0123456789abcdef000000000000002a")
        #expect(MozillaPushUAID.device(uaid)?.androidID == 0x0123_4567_89ab_cdef)
        #expect(MozillaPushUAID.device(uaid)?.securityToken == 42)
        #expect(MozillaPushUAID.device("0123456789ABCDEF000000000000002a") == nil)
        #expect(MozillaPushUAID.device("8c6a5fd4-4a8c-4a3e-9d8b-0e9c6f0a1b2c") == nil)
        #expect(MozillaPushUAID.redacted(uaid) == "01234567…")
    }
}
