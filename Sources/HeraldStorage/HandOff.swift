public import HeraldCore

/// A queue entry claimed for its hand-off, with where it goes.
public struct HandOff: Sendable, Hashable {
    public var entry: QueuedMessage
    public var address: APNsAddress

    public init(entry: QueuedMessage, address: APNsAddress) {
        self.entry = entry
        self.address = address
    }
}
