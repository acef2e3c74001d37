/// A decoded and validated `messages:send` request body.
public struct SendRequest: Sendable, Equatable {
    /// The message to send.
    public var message: Message
    /// Whether this is a dry run (`validate_only`).
    public var validateOnly: Bool
    /// Whether another Herald handed this send off (its `handOffHeader`): a token this
    /// Herald does not hold is then `UNREGISTERED`, never handed off again (SEMANTICS R5).
    public var isHandOff = false

    /// The header a hand-off to FCM carries, so that a Herald receiving it never hands it on.
    public static let handOffHeader = "x-herald-hand-off"

    public init(message: Message, validateOnly: Bool) {
        self.message = message
        self.validateOnly = validateOnly
    }

    /// Decodes, normalizes and validates a request body.
    public static func decode(_ body: some Collection<UInt8>, limits: MessageLimits = MessageLimits())
        throws(HeraldError) -> SendRequest
    {
        let document: JSONValue
        do {
            document = try JSONParser.parse(body)
        } catch {
            throw HeraldError.invalidArgument("Invalid JSON payload received. \(error.description).")
        }
        return try decode(document: document, limits: limits)
    }

    /// Normalizes and validates a parsed request body.
    public static func decode(document: JSONValue, limits: MessageLimits = MessageLimits()) throws(HeraldError)
        -> SendRequest
    {
        let normalized = try SchemaNormalizer.normalize(document, as: .sendMessageRequest, path: "")
        guard let message = normalized["message"] else {
            throw HeraldError.invalidField("message", "The message field is required.")
        }
        return SendRequest(
            message: try MessageValidator.validate(message, limits: limits),
            validateOnly: normalized["validate_only"]?.boolValue ?? false)
    }
}
