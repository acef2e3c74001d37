public import HeraldCore

/// What an app instance on each platform would receive of a message (SEMANTICS P1–P3): the
/// delivery options read the way that platform reads them, and the payload tailored for
/// it, as the console's composer shows them before anything is sent.
public struct DeliveryPreview: Sendable {
    public var platform: Platform
    public var options: DeliveryOptions
    /// For Android the `app_data` pairs, for Apple the APNs payload, for the web the JSON
    /// that is encrypted for the browser.
    public var payload: JSONValue

    /// The preview for each platform, for an app `appID` of `project`.
    public static func all(
        of message: Message, project: Project, appID: String = "com.example.app", now: Timestamp
    ) -> [DeliveryPreview] {
        Platform.allCases.map { platform in
            let options = DeliveryOptions(
                message: message, platform: platform, appID: appID, limits: project.settings.message, now: now)
            let registration = Registration(
                token: "preview", kind: .app, projectID: project.id, sender: String(project.number), appID: appID,
                subtype: nil, platform: platform, androidID: 0, createdAt: now)
            let context = DeliveryTailor.Context(
                messageID: "0:preview", registration: registration, project: project, sentAt: now, options: options)
            let payload: JSONValue
            switch platform {
            case .android:
                payload = .object(
                    DeliveryTailor.androidAppData(message, context).map { (key: $0.key, value: .string($0.value)) })
            case .apple: payload = DeliveryTailor.applePayload(message, context)
            case .web: payload = DeliveryTailor.webPayload(message, context)
            }
            return DeliveryPreview(platform: platform, options: options, payload: payload)
        }
    }
}
