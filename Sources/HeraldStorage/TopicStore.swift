public import HeraldCore

/// Who a topic, condition or device group reaches: subscriptions, audiences in pages, and
/// device groups.
///
/// Every method is a transaction of its own; a method that returns has made its change
/// durable.
public protocol TopicStore: Sendable {
    /// Subscribes a token to a topic; false when it was subscribed already. Throws
    /// `StoreError.limit` when the token has `limit` subscriptions already.
    func subscribe(_ subscription: TopicSubscription, limit: Int) async throws -> Bool

    /// Unsubscribes a token; false when it was not subscribed.
    func unsubscribe(token: String, topic: String) async throws -> Bool

    /// A token's subscriptions, by topic name.
    func subscriptions(token: String) async throws -> [TopicSubscription]

    /// The topics each of `tokens` is subscribed to, read at once (a condition fanout
    /// checks a page of hundreds); tokens with no subscription are left out.
    func topics(ofTokens tokens: [String]) async throws -> [String: Set<String>]

    /// Live app registrations of a project after `cursor` (a `FanoutPosition`), in its
    /// order, at most `limit`: those subscribed to any of `topics`, or every one when
    /// `topics` is nil.
    func audience(projectID: String, topics: [String]?, after cursor: String, limit: Int) async throws
        -> [Registration]

    /// Live app registrations of a project on the devices `androidIDs`, ordered by token:
    /// those subscribed to any of `topics`, or every one when `topics` is nil.
    func audience(projectID: String, topics: [String]?, androidIDs: [UInt64]) async throws -> [Registration]

    /// Creates a device group. Throws `StoreError.conflict` when the name is taken in the project.
    func createDeviceGroup(_ group: DeviceGroup) async throws

    /// A project's device group by name or by notification key.
    func deviceGroup(projectID: String, name: String?, notificationKey: String?) async throws -> DeviceGroup?

    /// Replaces a group's members; an empty list deletes the group.
    func updateDeviceGroup(projectID: String, notificationKey: String, members: [String]) async throws

    /// Up to `limit` of a project's topics by name, each with its subscribers counted up to
    /// `countingUpTo`: a larger topic answers that many, so that the work stays bounded.
    func topicSizes(projectID: String, limit: Int, countingUpTo: Int) async throws
        -> [(topic: String, subscribers: Int)]

    /// Up to `limit` of a project's device groups, by name.
    func deviceGroups(projectID: String, limit: Int) async throws -> [DeviceGroup]

    /// How many device groups a project has, counted up to `countingUpTo`.
    func deviceGroupCount(projectID: String, countingUpTo: Int) async throws -> Int
}
