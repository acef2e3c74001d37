import HeraldCore

/// The HTTP v1 send body: JSON parsing, schema normalisation and every validation rule.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    _ = try? SendRequest.decode(UnsafeRawBufferPointer(start: data, count: count))
    return 0
}
