import HeraldProtocol

/// The check-in endpoint's protobuf body.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: count))
    if let request = try? CheckinProto_AndroidCheckinRequest(serializedBytes: bytes) {
        _ = try? request.serializedBytes() as [UInt8]
    }
    return 0
}
