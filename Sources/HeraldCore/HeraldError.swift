/// The one error type clients see, carrying FCM's error model.
///
/// Each protocol renders it in exactly one place: the v1 API as a `google.rpc.Status`
/// body, the legacy APIs as their own result strings.
public struct HeraldError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A canonical Google API status (`google.rpc.Code`) with its HTTP status.
    public struct Status: Hashable, Sendable, CustomStringConvertible {
        /// The status name, such as `INVALID_ARGUMENT`.
        public let name: String
        /// The HTTP status the name travels with.
        public let httpStatus: Int

        public var description: String { name }

        public static let invalidArgument = Status(name: "INVALID_ARGUMENT", httpStatus: 400)
        public static let failedPrecondition = Status(name: "FAILED_PRECONDITION", httpStatus: 400)
        public static let unauthenticated = Status(name: "UNAUTHENTICATED", httpStatus: 401)
        public static let permissionDenied = Status(name: "PERMISSION_DENIED", httpStatus: 403)
        public static let notFound = Status(name: "NOT_FOUND", httpStatus: 404)
        public static let alreadyExists = Status(name: "ALREADY_EXISTS", httpStatus: 409)
        public static let payloadTooLarge = Status(name: "INVALID_ARGUMENT", httpStatus: 413)
        public static let resourceExhausted = Status(name: "RESOURCE_EXHAUSTED", httpStatus: 429)
        public static let `internal` = Status(name: "INTERNAL", httpStatus: 500)
        public static let unimplemented = Status(name: "UNIMPLEMENTED", httpStatus: 501)
        public static let unavailable = Status(name: "UNAVAILABLE", httpStatus: 503)
    }

    /// An FCM error code (`google.firebase.fcm.v1.FcmError.errorCode`).
    public struct FCMCode: Hashable, Sendable, CustomStringConvertible {
        /// The code as FCM spells it.
        public let rawValue: String
        /// The legacy HTTP protocol's result string for the same condition.
        public let legacyName: String

        public var description: String { rawValue }

        public static let invalidArgument = FCMCode(rawValue: "INVALID_ARGUMENT", legacyName: "InvalidParameters")
        public static let unregistered = FCMCode(rawValue: "UNREGISTERED", legacyName: "NotRegistered")
        public static let senderIDMismatch = FCMCode(rawValue: "SENDER_ID_MISMATCH", legacyName: "MismatchSenderId")
        public static let quotaExceeded = FCMCode(rawValue: "QUOTA_EXCEEDED", legacyName: "DeviceMessageRateExceeded")
        public static let unavailable = FCMCode(rawValue: "UNAVAILABLE", legacyName: "Unavailable")
        public static let `internal` = FCMCode(rawValue: "INTERNAL", legacyName: "InternalServerError")
        public static let thirdPartyAuthError = FCMCode(
            rawValue: "THIRD_PARTY_AUTH_ERROR", legacyName: "InvalidApnsCredential")
    }

    /// One offending field, rendered as a `google.rpc.BadRequest` field violation.
    public struct FieldViolation: Hashable, Sendable {
        /// The field path, such as `message.android.ttl`.
        public var field: String
        /// Why the value is not accepted.
        public var description: String

        public init(field: String, description: String) {
            self.field = field
            self.description = description
        }
    }

    /// The canonical status.
    public var canonicalStatus: Status
    /// The FCM error code, when the error is one FCM reports with an `FcmError` detail.
    public var fcmCode: FCMCode?
    /// The human-readable message.
    public var message: String
    /// Field violations for a `BadRequest` detail.
    public var fieldViolations: [FieldViolation]
    /// Seconds a client should wait before retrying, sent as `Retry-After`.
    public var retryAfterSeconds: Int?
    /// The quota that was exceeded, for a `QuotaFailure` detail.
    public var quotaSubject: String?
    /// The legacy result string when it differs from the FCM code's default one.
    public var legacyName: String?

    public init(
        status: Status,
        fcmCode: FCMCode? = nil,
        message: String,
        fieldViolations: [FieldViolation] = [],
        retryAfterSeconds: Int? = nil,
        quotaSubject: String? = nil,
        legacyName: String? = nil
    ) {
        self.canonicalStatus = status
        self.fcmCode = fcmCode
        self.message = message
        self.fieldViolations = fieldViolations
        self.retryAfterSeconds = retryAfterSeconds
        self.quotaSubject = quotaSubject
        self.legacyName = legacyName
    }

    public var description: String { "\(canonicalStatus.name)\(fcmCode.map { "/\($0)" } ?? ""): \(message)" }

    /// The result string the legacy HTTP protocol uses for this error.
    public var legacyResult: String { legacyName ?? fcmCode?.legacyName ?? "InvalidParameters" }

    /// A message field that FCM rejects with `INVALID_ARGUMENT`.
    public static func invalidField(
        _ field: String, _ description: String, legacyName: String? = nil
    ) -> HeraldError {
        HeraldError(
            status: .invalidArgument, fcmCode: .invalidArgument, message: description,
            fieldViolations: [FieldViolation(field: field, description: description)], legacyName: legacyName)
    }

    /// A request FCM rejects with `INVALID_ARGUMENT` without naming one field.
    public static func invalidArgument(_ message: String, legacyName: String? = nil) -> HeraldError {
        HeraldError(status: .invalidArgument, fcmCode: .invalidArgument, message: message, legacyName: legacyName)
    }

    /// A token that cannot be a registration token (`RegistrationTokenFormat`), named as `field`.
    public static func malformedToken(field: String) -> HeraldError {
        invalidField(
            field, "The registration token is not a valid FCM registration token", legacyName: "InvalidRegistration")
    }

    /// The registration token is not (or no longer) registered.
    public static let unregistered = HeraldError(
        status: .notFound, fcmCode: .unregistered, message: "Requested entity was not found.")

    /// The token belongs to another sender.
    public static let senderIDMismatch = HeraldError(
        status: .permissionDenied, fcmCode: .senderIDMismatch, message: "SenderId mismatch")

    /// Credentials are missing, expired or forged.
    public static func unauthenticated(_ message: String) -> HeraldError {
        HeraldError(status: .unauthenticated, message: message)
    }

    /// Valid credentials that may not act on this resource.
    public static func permissionDenied(_ message: String) -> HeraldError {
        HeraldError(status: .permissionDenied, message: message)
    }

    /// A resource that does not exist.
    public static func notFound(_ message: String) -> HeraldError {
        HeraldError(status: .notFound, message: message)
    }

    /// A resource that exists already.
    public static func alreadyExists(_ message: String) -> HeraldError {
        HeraldError(status: .alreadyExists, message: message)
    }

    /// A failure inside Herald; the client may retry.
    public static func `internal`(_ message: String = "Internal error encountered.") -> HeraldError {
        HeraldError(status: .internal, fcmCode: .internal, message: message)
    }

    /// Herald is overloaded; the client should retry after the given delay.
    public static func unavailable(retryAfterSeconds: Int, _ message: String = "The service is currently unavailable.")
        -> HeraldError
    {
        HeraldError(status: .unavailable, fcmCode: .unavailable, message: message, retryAfterSeconds: retryAfterSeconds)
    }

    /// A rate or quota limit was hit.
    public static func quotaExceeded(
        subject: String, retryAfterSeconds: Int, message: String, legacyName: String? = nil
    ) -> HeraldError {
        HeraldError(
            status: .resourceExhausted, fcmCode: .quotaExceeded, message: message,
            retryAfterSeconds: retryAfterSeconds, quotaSubject: subject, legacyName: legacyName)
    }
}
