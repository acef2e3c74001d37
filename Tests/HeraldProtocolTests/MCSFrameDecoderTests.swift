import HeraldProtocol
import Testing

@Suite struct MCSFrameDecoderTests {
    func login() -> McsProto_LoginRequest {
        var login = McsProto_LoginRequest()
        login.id = "chrome-94"
        login.domain = "mcs.android.com"
        login.user = "1234"
        login.resource = "1234"
        login.authToken = "5678"
        login.receivedPersistentID = ["a", "b"]
        return login
    }

    @Test func decodesFramesFedOneByteAtATime() throws {
        let frames = [
            try MCSFrame(.loginRequest, login()), MCSFrame(tag: .heartbeatPing, payload: []),
            try MCSFrame(.close, McsProto_Close()),
        ]
        var bytes = frames[0].encoded(withVersion: true)
        bytes += frames[1].encoded(withVersion: false) + frames[2].encoded(withVersion: false)
        var decoder = MCSFrameDecoder(expectsVersion: true)
        var decoded: [MCSFrame] = []
        for byte in bytes {
            decoder.append([byte])
            while let frame = try decoder.next() { decoded.append(frame) }
        }
        #expect(decoded == frames)
        #expect(decoder.peerVersion == 41)
        #expect(try decoded[0].decode(as: McsProto_LoginRequest.self) == login())
        #expect(decoder.pendingByteCount == 0)
    }

    @Test func decodesManyFramesFromOneChunk() throws {
        var decoder = MCSFrameDecoder(expectsVersion: false)
        let frame = MCSFrame(tag: .dataMessageStanza, payload: Array(repeating: 7, count: 300))
        decoder.append((0..<50).flatMap { _ in frame.encoded(withVersion: false) })
        var count = 0
        while let decoded = try decoder.next() {
            #expect(decoded == frame)
            count += 1
        }
        #expect(count == 50)
    }

    @Test func acceptsTheVersionsFCMClientsSendAndRefusesEveryOther() throws {
        for version in UInt8(38)...41 {
            var decoder = MCSFrameDecoder(expectsVersion: true)
            decoder.append([version, 0, 0])
            #expect(try decoder.next()?.tag == .heartbeatPing)
        }
        for version: UInt8 in [0, 37, 42, 0x7F, 0xFF] {
            var decoder = MCSFrameDecoder(expectsVersion: true)
            decoder.append([version, 0, 0])
            #expect(throws: MCSFrameDecoder.Failure.unsupportedVersion(version)) { try decoder.next() }
        }
    }

    @Test func refusesUnknownTagsOversizedFramesAndEndlessVarints() {
        var unknown = MCSFrameDecoder(expectsVersion: false)
        unknown.append([16, 0])
        #expect(throws: MCSFrameDecoder.Failure.unknownTag(16)) { try unknown.next() }
        var large = MCSFrameDecoder(expectsVersion: false, maximumPayloadBytes: 100)
        large.append([8, 0xE5, 0x00])
        #expect(throws: MCSFrameDecoder.Failure.frameTooLarge(101)) { try large.next() }
        var endless = MCSFrameDecoder(expectsVersion: false)
        endless.append([8] + Array(repeating: 0xFF, count: 6))
        #expect(throws: MCSFrameDecoder.Failure.malformedLength) { try endless.next() }
    }

    @Test func waitsForTheWholeFrame() throws {
        var decoder = MCSFrameDecoder(expectsVersion: false)
        decoder.append([8, 3, 1, 2])
        #expect(try decoder.next() == nil)
        decoder.append([3])
        #expect(try decoder.next() == MCSFrame(tag: .dataMessageStanza, payload: [1, 2, 3]))
    }
}
