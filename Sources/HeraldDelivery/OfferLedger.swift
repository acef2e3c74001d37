public import HeraldCore

/// Where each message offered to a device's session while its row was being written stands
/// ("offered while stored", docs/ARCHITECTURE.md): a value that takes the protocol's events
/// and answers what to do. `DeviceRegistry` keeps it under a lock and carries the answers out.
///
/// The order it keeps: an offer is recorded before the session can see it; the session
/// sends or declines it; the device may acknowledge it before or after its row exists; the
/// write ends it. An acknowledgement that comes before the row is held here, and the row is
/// deleted (or never written) once the write knows of it, so nothing is delivered twice.
struct OfferLedger {
    /// An offered message: persistent ids are unique per device.
    struct Key: Hashable {
        var androidID: UInt64
        var persistentID: String

        init(_ entry: QueuedMessage) {
            self.init(androidID: entry.androidID, persistentID: entry.persistentID)
        }

        init(androidID: UInt64, persistentID: String) {
            self.androidID = androidID
            self.persistentID = persistentID
        }
    }

    /// Where one offer stands.
    enum State {
        /// Handed to the session, which has not sent it yet; the settlement of its page, if
        /// the page waits for its devices' answers.
        case offered(Settlement?)
        /// Sent to the device; its row may not be written yet.
        case sent(Settlement?)
        /// Acknowledged before its row was written.
        case acknowledged
    }

    private var offers: [Key: State] = [:]

    /// Records an offer, before the session can see it.
    mutating func offer(_ key: Key, settlement: Settlement?) {
        offers[key] = .offered(settlement)
    }

    /// The session sent an offered message; answers the settlement that counts it as progress.
    mutating func sent(_ key: Key) -> Settlement? {
        guard case .offered(let settlement) = offers[key] else { return nil }
        offers[key] = .sent(settlement)
        return settlement
    }

    /// The session declined an offer (its device dozes, its window is full, or it has older
    /// messages to read first): the message will be written and read like any other, and its
    /// page waits no longer for it. Answers the settlement to answer.
    mutating func declined(_ key: Key) -> Settlement? {
        guard case .offered(let settlement?) = offers[key] else { return nil }
        offers[key] = .offered(nil)
        return settlement
    }

    /// A device acknowledged `persistentIDs`: answers those whose rows may be deleted now
    /// (all but those sent before their rows were written, whose deletion waits for the
    /// write) and the settlements they answer.
    mutating func acknowledged(androidID: UInt64, _ persistentIDs: [String]) -> (
        ready: [String], answered: [Settlement]
    ) {
        guard !offers.isEmpty else { return (persistentIDs, []) }
        var answered: [Settlement] = []
        let ready = persistentIDs.filter { id in
            let key = Key(androidID: androidID, persistentID: id)
            guard case .sent(let settlement) = offers[key] else { return true }
            offers[key] = .acknowledged
            if let settlement { answered.append(settlement) }
            return false
        }
        return (ready, answered)
    }

    /// Whether an offered message was acknowledged while its page waited; such an offer is
    /// finished here, and its row need not be written.
    mutating func takeAcknowledged(_ key: Key) -> Bool {
        guard case .acknowledged = offers[key] else { return false }
        offers[key] = nil
        return true
    }

    /// The write of an offered message ended; answers whether the device acknowledged it
    /// meanwhile (its row must then be deleted). The offer is finished.
    mutating func written(_ key: Key) -> Bool {
        guard case .acknowledged = offers.removeValue(forKey: key) else { return false }
        return true
    }

    /// Forgets an offer whose write failed or that its session refused.
    mutating func withdraw(_ key: Key) {
        offers[key] = nil
    }
}
