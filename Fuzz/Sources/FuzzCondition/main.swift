import HeraldCore

/// Topic conditions, parsed and evaluated.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeRawBufferPointer(start: data, count: count), as: UTF8.self)
    if let condition = try? Condition.parse(text) {
        _ = condition.matches { $0.count % 2 == 0 }
        _ = condition.description
    }
    return 0
}
