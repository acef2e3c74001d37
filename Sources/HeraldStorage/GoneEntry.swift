import HeraldCore

/// A message's queue entry as a store deleted it: what its counters and its event need.
struct GoneEntry {
    var key: DeliveryStatKey
    var fact: DeliveryFact

    /// One of `counter` for it.
    func stat(_ counter: DeliveryCounter) -> DeliveryStat { DeliveryStat(key, counter, fact: fact) }
}
