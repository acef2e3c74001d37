public import HeraldCore

/// Claims of hand-offs to APNs and FCM (`HandOffStore`), as the SQL backends make them.
extension InMemoryStore {
    public func claimHandOffs(limit: Int, now: Timestamp, until: Timestamp) -> [HandOff] {
        let due = queuedEntries.filter {
            Device.isHandOff($0.androidID) && $0.expiresAt > now && handOffDue($0.sequence) <= now.milliseconds
        }.sorted { (handOffDue($0.sequence), $0.sequence) < (handOffDue($1.sequence), $1.sequence) }.prefix(limit)
        var claimed: [HandOff] = []
        for entry in due {
            if let destination = registration(token: entry.token)?.handOffColumn.flatMap(HandOff.destination(column:)) {
                claimed.append(HandOff(entry: entry, destination: destination))
                handOffAt[entry.sequence] = until.milliseconds
            } else {
                handOffAt[entry.sequence] = Int64.max
            }
        }
        return claimed
    }

    public func deferHandOffs(_ sequences: [Int64], to at: Timestamp) {
        for sequence in sequences { handOffAt[sequence] = at.milliseconds }
    }

    public func registration(apns: APNsAddress, projectID: String) -> Registration? {
        registrationsByToken.values.filter { $0.apns == apns && $0.projectID == projectID && $0.deletedAt == nil }
            .max { ($0.createdAt, $0.token) < ($1.createdAt, $1.token) }
    }

    private func handOffDue(_ sequence: Int64) -> Int64 { handOffAt[sequence] ?? 0 }
}
