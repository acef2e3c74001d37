/// Where `DeliveryPath` sends the acknowledged messages whose rows are to be deleted: the
/// node's `AcknowledgementBatcher`.
public protocol AcknowledgementWriter: Sendable {
    /// Adds acknowledgements to be written; callable from any thread without waiting.
    func submit(androidID: UInt64, persistentIDs: [String])
}
