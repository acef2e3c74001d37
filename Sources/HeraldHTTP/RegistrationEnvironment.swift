public import HeraldCore
public import HeraldDelivery
public import HeraldStorage
public import HeraldTelemetry
public import Logging

/// What the endpoints app instances register through need (`DeviceRegistrationRoutes`,
/// `Register3Endpoint`, `AppleRegistrationRoutes`): the registrations, topics, APNs
/// addresses and push service endpoints they keep, and the limits on what one address or
/// device may ask.
public struct RegistrationEnvironment: Sendable {
    public var store: any RegistrationStore & TopicStore & HandOffStore & WebPushKeyStore
    public var directory: CredentialDirectory
    public var authenticator: Authenticator
    public var tokens: AccessTokens
    /// The topic-operation quota (T2) a `register3` subscription counts against.
    public var quotas: Quotas
    /// Bounds what one address or device may ask of these unauthenticated endpoints.
    public var deviceRequests: DeviceRequestLimiter
    public var clock: any HeraldClock
    public var metrics: HeraldMetrics
    public var logger: Logger
    /// The browsers' push services web registrations may name (SEMANTICS W1).
    public var webPushServices: WebPushServices
    /// Why an endpoint at one of them may not be reached (its host's addresses checked as
    /// webhook targets are), or nil when it may.
    public var webPushAddressRefusal: @Sendable (String) -> String?
}
