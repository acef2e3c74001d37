import HeraldProtocol

/// The device gateway's view of a client's bytes: the version byte, frames, and each
/// frame's protobuf as the session decodes it. Malformed input must end in an error,
/// never a crash or a hang.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    var decoder = MCSFrameDecoder(expectsVersion: true)
    decoder.append(UnsafeRawBufferPointer(start: data, count: count))
    while let frame = try? decoder.next() {
        switch frame.tag {
        case .loginRequest: _ = try? frame.decode(as: McsProto_LoginRequest.self)
        case .dataMessageStanza: _ = try? frame.decode(as: McsProto_DataMessageStanza.self)
        case .iqStanza: _ = try? frame.decode(as: McsProto_IqStanza.self)
        case .heartbeatPing: _ = try? frame.decode(as: McsProto_HeartbeatPing.self)
        case .heartbeatAck: _ = try? frame.decode(as: McsProto_HeartbeatAck.self)
        case .close: _ = try? frame.decode(as: McsProto_Close.self)
        default: break
        }
    }
    return 0
}
