import HeraldDelivery

/// An acknowledgement writer made of a function, for tests that watch what the path writes.
struct ClosureAcknowledgementWriter: AcknowledgementWriter {
    let body: @Sendable (_ androidID: UInt64, _ persistentIDs: [String]) -> Void

    init(_ body: @escaping @Sendable (_ androidID: UInt64, _ persistentIDs: [String]) -> Void) {
        self.body = body
    }

    func submit(androidID: UInt64, persistentIDs: [String]) { body(androidID, persistentIDs) }
}
