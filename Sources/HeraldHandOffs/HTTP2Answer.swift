/// Another push service's answer to one request: its status, its `retry-after` header, and
/// the first bytes of its body.
struct HTTP2Answer: Sendable, Equatable {
    var status: Int
    var retryAfter: String?
    var body: [UInt8]

    /// `retry-after` in seconds (the delay form; a date is not read), if given.
    var retryAfterSeconds: Int64? { retryAfter.flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) } }
}
