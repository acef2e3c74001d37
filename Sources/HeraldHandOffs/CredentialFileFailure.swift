/// Why an uploaded credential (an APNs key or certificate, a Google service-account key
/// file) is refused; `description` says it to the operator and never holds the key.
public struct CredentialFileFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
