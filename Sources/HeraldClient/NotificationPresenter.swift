/// A notification the SDK shows for the app while it is in the background (SEMANTICS M4).
public struct PresentedNotification: Sendable, Equatable {
    /// The message it came with; `HeraldClient.open(messageID:)` hands its data to the app.
    public var messageID: String
    /// Notification fields: title, body, image and platform keys.
    public var fields: [String: String]
}

/// Shows notifications while the app is in the background; a device's tray.
public protocol NotificationPresenter: Sendable {
    func present(_ notification: PresentedNotification) async
}

/// The default presenter: keeps shown notifications in a tray the app can read.
public actor NotificationTray: NotificationPresenter {
    public private(set) var notifications: [PresentedNotification] = []

    public init() {}

    public func present(_ notification: PresentedNotification) {
        notifications.append(notification)
    }
}

/// Whether the app is in front of the user (SEMANTICS M4).
public enum AppState: String, Sendable {
    case foreground
    case background
}
