public import HeraldCore

/// A project's topics and device groups as the console lists them (`TopicStore`).
extension InMemoryStore {
    public func topicSizes(projectID: String, limit: Int, countingUpTo: Int) -> [(topic: String, subscribers: Int)] {
        var sizes: [String: Int] = [:]
        for subscription in topicSubscriptions.values.flatMap(\.values) where subscription.projectID == projectID {
            sizes[subscription.topic, default: 0] += 1
        }
        return sizes.sorted { $0.key < $1.key }.prefix(limit).map { ($0.key, min($0.value, countingUpTo)) }
    }

    public func deviceGroups(projectID: String, limit: Int) -> [DeviceGroup] {
        Array(deviceGroups.values.filter { $0.projectID == projectID }.sorted { $0.name < $1.name }.prefix(limit))
    }

    public func deviceGroupCount(projectID: String, countingUpTo: Int) -> Int {
        min(deviceGroups.values.count { $0.projectID == projectID }, countingUpTo)
    }
}
