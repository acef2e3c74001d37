import HeraldCore

extension QueueBatchPlan {
    /// The plan of a store's write, a repeated persistent id refused as `StoreError.conflict`.
    init(
        storing entries: [QueuedMessage], current: [QueuedMessage], taken: Set<DeviceMessage>, limits: QueueLimits,
        stats: [DeliveryStat]
    ) throws(StoreError) {
        do {
            try self.init(entries, current: current, taken: taken, limits: limits, stats: stats)
        } catch {
            throw StoreError.conflict("persistent id \(error.persistentID)")
        }
    }
}
