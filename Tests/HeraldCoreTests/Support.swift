import HeraldCore
import Testing

/// Decodes a send request body given as text.
func decode(_ text: String, limits: MessageLimits = MessageLimits()) throws(HeraldError) -> SendRequest {
    try SendRequest.decode(Array(text.utf8), limits: limits)
}

/// Decodes `{"message": <message>}`.
func decodeMessage(_ message: String) throws(HeraldError) -> Message {
    try decode("{\"message\": \(message)}").message
}

/// The error a message fails validation with.
func validationError(_ message: String) -> HeraldError? {
    do {
        _ = try decodeMessage(message)
        return nil
    } catch {
        return error
    }
}

/// Checks that a message is refused with `INVALID_ARGUMENT` naming the field.
func expectInvalid(
    _ message: String, field: String? = nil, legacy: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
) {
    guard let error = validationError(message) else {
        Issue.record("accepted: \(message)", sourceLocation: sourceLocation)
        return
    }
    #expect(error.canonicalStatus == .invalidArgument, sourceLocation: sourceLocation)
    #expect(error.fcmCode == .invalidArgument, sourceLocation: sourceLocation)
    if let field {
        #expect(error.fieldViolations.map(\.field) == [field], "\(error)", sourceLocation: sourceLocation)
    }
    if let legacy {
        #expect(error.legacyResult == legacy, sourceLocation: sourceLocation)
    }
}
