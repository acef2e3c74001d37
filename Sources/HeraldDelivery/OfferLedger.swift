public import HeraldCore

/// Where each message offered to a device's session while its row is being written stands
/// ("offered while stored", docs/ARCHITECTURE.md), and how long each producer still waits
/// for its devices' answers: a value that takes the protocol's events with the time they
/// happened at and answers what to do. `DeliveryPath` keeps it under a lock and carries the
/// actions out; it does no I/O and reads no clock.
///
/// The order it keeps: an offer is recorded before the session can see it; the session
/// takes or declines it; the device may acknowledge it before or after its row exists; the
/// write ends it. An acknowledgement that comes before the row is held here, and the row is
/// deleted (or never written) once the write knows of it, so nothing is delivered twice.
///
/// A producer that waits (a `Settle`) opens a page: the page's wait ends when every offer
/// on it is answered, when no news came from its devices for the quiet time, or at its
/// limit. Its alarm is set once and moved only when news came meanwhile; nothing polls.
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

    /// What `DeliveryPath` must do.
    enum Action: Equatable {
        /// The page's wait is over: its producer goes on.
        case release(page: UInt64)
        /// Ring the page's alarm (`alarmRang`) at this reading of the clock.
        case setAlarm(page: UInt64, at: Duration)
        /// Delete the rows of these acknowledged messages of the device.
        case writeAcknowledgements(androidID: UInt64, [String])
    }

    /// Where one offer stands, with its page when its producer waits.
    private enum State {
        /// Handed to the session, which has not answered yet.
        case offered(page: UInt64?)
        /// Sent to the device; its row may not be written yet.
        case sent(page: UInt64?)
        /// Acknowledged before its row was written.
        case acknowledged
    }

    /// One waiting producer's offers.
    private struct Page {
        var unanswered = 0
        let quiet: Duration
        let ends: Duration
        /// When the page last heard from a session or a device.
        var lastNews: Duration
        /// Whether its wait is over.
        var released = false
    }

    private var offers: [Key: State] = [:]
    private var pages: [UInt64: Page] = [:]
    private var nextPage: UInt64 = 1

    /// Opens a page whose producer will wait for its devices under `settle`, from `now`.
    mutating func openPage(_ settle: DeliveryPath.Settle, now: Duration) -> UInt64 {
        defer { nextPage += 1 }
        pages[nextPage] = Page(quiet: settle.quiet, ends: now + settle.limit, lastNews: now)
        return nextPage
    }

    /// Records an offer, before the session can see it.
    mutating func offer(_ key: Key, page: UInt64?) {
        offers[key] = .offered(page: page)
        if let page { pages[page]?.unanswered += 1 }
    }

    /// The session could not be handed the offer (its connection is gone, its device dozes).
    mutating func refused(_ key: Key) -> [Action] {
        guard case .offered(let page) = offers.removeValue(forKey: key) else { return [] }
        return answer(page, now: nil)
    }

    /// The session sent the offered message, before the device can answer it.
    mutating func taken(_ key: Key, now: Duration) {
        guard case .offered(let page) = offers[key] else { return }
        offers[key] = .sent(page: page)
        if let page { pages[page]?.lastNews = now }
    }

    /// The session declined an offer (its device dozes, its window is full, or it has older
    /// messages to read first): the message will be written and read like any other, and
    /// its page waits no longer for it.
    mutating func declined(_ key: Key, now: Duration) -> [Action] {
        guard case .offered(let page) = offers[key] else { return [] }
        offers[key] = .offered(page: nil)
        return answer(page, now: now)
    }

    /// A device acknowledged `persistentIDs`: the rows that may be deleted now (all but
    /// those sent before their rows were written, whose deletion waits for the write) and
    /// the pages that wait no longer.
    mutating func acknowledged(androidID: UInt64, _ persistentIDs: [String], now: Duration) -> [Action] {
        guard !offers.isEmpty else { return [.writeAcknowledgements(androidID: androidID, persistentIDs)] }
        var actions: [Action] = []
        let ready = persistentIDs.filter { id in
            let key = Key(androidID: androidID, persistentID: id)
            guard case .sent(let page) = offers[key] else { return true }
            offers[key] = .acknowledged
            actions += answer(page, now: now)
            return false
        }
        if !ready.isEmpty { actions.insert(.writeAcknowledgements(androidID: androidID, ready), at: 0) }
        return actions
    }

    /// One offer of `page` is answered; nil `now` for an answer that is no news of a device.
    private mutating func answer(_ page: UInt64?, now: Duration?) -> [Action] {
        guard let page, var waiting = pages[page], !waiting.released else { return [] }
        waiting.unanswered -= 1
        if let now { waiting.lastNews = now }
        if waiting.unanswered == 0 { waiting.released = true }
        pages[page] = waiting
        return waiting.released ? [.release(page: page)] : []
    }

    /// The producer of `page` starts waiting at `now`: its release, if nothing is left to
    /// wait for, or its alarm.
    mutating func wait(page: UInt64, now: Duration) -> [Action] {
        guard var waiting = pages[page], !waiting.released else { return [.release(page: page)] }
        guard waiting.unanswered > 0, now < waiting.ends else {
            waiting.released = true
            pages[page] = waiting
            return [.release(page: page)]
        }
        return [.setAlarm(page: page, at: min(waiting.lastNews + waiting.quiet, waiting.ends))]
    }

    /// The page's alarm rang at `now`: the wait ends if its devices were quiet for the
    /// quiet time or the limit is reached; otherwise the alarm is set again from the last news.
    mutating func alarmRang(page: UInt64, now: Duration) -> [Action] {
        guard var waiting = pages[page], !waiting.released else { return [] }
        let quietEnds = waiting.lastNews + waiting.quiet
        guard now >= quietEnds || now >= waiting.ends else {
            return [.setAlarm(page: page, at: min(quietEnds, waiting.ends))]
        }
        waiting.released = true
        pages[page] = waiting
        return [.release(page: page)]
    }

    /// Closes a released page: which of `keys` (its offers) their devices acknowledged and
    /// need no row. Those are finished here; the rest stay for the write to end.
    mutating func closePage(_ page: UInt64, keys: [Key?]) -> [Bool] {
        pages[page] = nil
        return keys.map { key in
            guard let key, case .acknowledged = offers[key] else { return false }
            offers[key] = nil
            return true
        }
    }

    /// The write of an offered message ended; answers whether the device acknowledged it
    /// meanwhile (its row must then be deleted). The offer is finished.
    mutating func written(_ key: Key) -> Bool {
        guard case .acknowledged = offers.removeValue(forKey: key) else { return false }
        return true
    }

    /// Forgets an offer whose write failed.
    mutating func withdraw(_ key: Key) {
        offers[key] = nil
    }

    /// How many offers and pages are open (for tests: none once every write has ended).
    var openCount: (offers: Int, pages: Int) { (offers.count, pages.count) }
}
