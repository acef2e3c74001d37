/// The app's view of a client's events: a message is acknowledged when the app asks for
/// the next one, that is, after its handler for this one returned.
public struct ClientEvents: AsyncSequence, Sendable {
    public typealias Element = ClientEvent

    let client: HeraldClient
    let stream: AsyncStream<HeraldClient.PendingEvent>

    public func makeAsyncIterator() -> Iterator {
        Iterator(client: client, iterator: stream.makeAsyncIterator())
    }

    public struct Iterator: AsyncIteratorProtocol {
        let client: HeraldClient
        var iterator: AsyncStream<HeraldClient.PendingEvent>.Iterator
        var current: HeraldClient.PendingEvent?

        public mutating func next() async -> ClientEvent? {
            if let current {
                await client.handled(current)
                self.current = nil
            }
            guard let pending = await iterator.next() else { return nil }
            current = pending
            return pending.event
        }
    }
}
