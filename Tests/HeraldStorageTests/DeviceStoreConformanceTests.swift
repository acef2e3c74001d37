import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Testing

func sampleRegistration(_ token: String, device: UInt64 = 42, project: String? = "alpha-project") -> Registration {
    Registration(
        token: token, kind: project == nil ? .webChannel : .app, projectID: project, sender: "123456789012",
        appID: "com.example.app", subtype: "wp:sub", platform: .web, androidID: device, installationID: "fid-1",
        webKeys: WebPushKeys(p256dh: [4, 1, 2], auth: [9, 9], coding: "aesgcm"), createdAt: Timestamp(seconds: 10))
}

func queued(_ id: String, device: UInt64 = 42, expires: Int64 = 10_000) -> QueuedMessage {
    QueuedMessage(
        androidID: device, token: "tok", persistentID: id, messageID: id, projectID: "alpha-project",
        stanza: [1, 2, 3],
        createdAt: Timestamp(seconds: 100), expiresAt: Timestamp(seconds: expires))
}

/// A store with the sample project and device 42.
func storeWithDevice(_ backend: Backend) async throws -> any HeraldStore {
    let store = try await backend.makeStore()
    try await store.createProject(sampleProject(), firstKey: sampleKey("k1"))
    try await store.createDevice(Device(androidID: 42, securityToken: .max, createdAt: Timestamp(seconds: 1)))
    return store
}

/// Conformance for devices, registrations, installations and device queues.
@Suite struct DeviceStoreConformanceTests {
    func prepared(_ backend: Backend) async throws -> any HeraldStore {
        try await storeWithDevice(backend)
    }

    /// A push message to a push channel (RFC 8030) belongs to no project: its entry is
    /// queued, read, withdrawn and acknowledged like any other, and counted nowhere.
    @Test(arguments: Backend.allCases)
    func aPushChannelsEntryHasNoProject(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        var first = queued("w1")
        first.projectID = ""
        var second = queued("w2")
        second.projectID = ""
        try await store.appendMessages([], queue: [first, second], limits: QueueLimits(ProjectSettings()), stats: [])
        let pending = try await store.pendingMessages(androidID: 42, after: 0, limit: 10, now: Timestamp(seconds: 200))
        #expect(pending.map(\.persistentID) == ["w1", "w2"] && pending.allSatisfy { $0.projectID.isEmpty })
        #expect(try await store.withdraw(androidID: 42, persistentID: "w1"))
        #expect(try await store.withdraw(androidID: 42, persistentID: "w1") == false)
        #expect(try await store.acknowledge(androidID: 42, persistentIDs: ["w2"]) == 1)
        #expect(try await store.queuedCount(androidID: 42) == 0)
    }

    @Test(arguments: Backend.allCases)
    func devicesKeepTheirFull64BitIdentity(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        let big = Device(androidID: .max - 1, securityToken: .max, createdAt: Timestamp(seconds: 2))
        try await store.createDevice(big)
        #expect(try await store.device(androidID: .max - 1) == big)
        #expect(try await store.device(androidID: 7) == nil)
        await #expect(throws: StoreError.self) { try await store.createDevice(big) }
    }

    @Test(arguments: Backend.allCases)
    func registrationsAreFoundByTokenDeviceAndInstallation(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        let registration = sampleRegistration("t1")
        try await store.createRegistration(registration)
        try await store.createRegistration(sampleRegistration("t0", project: nil))
        #expect(try await store.registration(token: "t1") == registration)
        #expect(try await store.registration(installationID: "fid-1", projectID: "alpha-project") == registration)
        #expect(try await store.registration(installationID: "fid-1", projectID: "beta") == nil)
        #expect(try await store.registrations(androidID: 42).map(\.token) == ["t0", "t1"])
        // A project's web registrations: not its channel (of no project), not its Android tokens.
        var android = sampleRegistration("t4")
        android.platform = .android
        android.webKeys = nil
        try await store.createRegistration(android)
        try await store.createRegistration(sampleRegistration("t5"))
        #expect(try await store.webRegistrations(projectID: "alpha-project", limit: 10).map(\.token) == ["t1", "t5"])
        #expect(try await store.webRegistrations(projectID: "alpha-project", limit: 1).map(\.token) == ["t1"])
        _ = try await store.deleteRegistration(token: "t5", at: Timestamp(seconds: 20))
        #expect(try await store.webRegistrations(projectID: "alpha-project", limit: 10).map(\.token) == ["t1"])
        await #expect(throws: StoreError.self) { try await store.createRegistration(registration) }
        await #expect(throws: StoreError.self) {
            try await store.createRegistration(sampleRegistration("t2", device: 99))
        }
        await #expect(throws: StoreError.self) {
            try await store.createRegistration(sampleRegistration("t3", project: "no-such-project"))
        }
    }

    @Test(arguments: Backend.allCases)
    func anInstallationIsCreatedOnceAndNeverReplaced(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        let installation = Installation(
            fid: "f", projectID: "alpha-project", appID: "1:2:web:3", refreshToken: "r",
            createdAt: Timestamp(seconds: 5))
        #expect(try await store.createInstallation(installation))
        #expect(try await store.installation(fid: "f", projectID: "alpha-project") == installation)
        var takeover = installation
        takeover.refreshToken = "r2"
        #expect(try await store.createInstallation(takeover) == false)
        #expect(try await store.installation(fid: "f", projectID: "alpha-project")?.refreshToken == "r")
    }

    @Test(arguments: Backend.allCases)
    func aCheckInThatNeverRegisteredNorConnectedIsRemovedAfterItsTime(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        let old = Timestamp(seconds: 1_000)
        for androidID in UInt64(900)...903 {
            try await store.createDevice(Device(androidID: androidID, securityToken: 1, createdAt: old))
        }
        try await store.createRegistration(
            Registration(
                token: Registration.makeToken(), kind: .app, projectID: "alpha-project", sender: "1", appID: "app",
                subtype: nil, platform: .android, androidID: 901, createdAt: old))
        try await store.recordConnection(androidID: 902, at: old)
        _ = try await store.deleteAbandonedDevices(checkedInBefore: old, limit: 100)
        #expect(try await store.device(androidID: 900) != nil)
        #expect(try await store.deleteAbandonedDevices(checkedInBefore: Timestamp(seconds: 2_000), limit: 100) == 2)
        #expect(try await store.device(androidID: 900) == nil)
        #expect(try await store.device(androidID: 903) == nil)
        #expect(try await store.device(androidID: 901) != nil)
        #expect(try await store.device(androidID: 902) != nil)
    }

    /// Installations need only the public API key: one that no registration names is
    /// removed after its time, one a registration names is kept.
    @Test(arguments: Backend.allCases)
    func anInstallationThatNoRegistrationNamesIsRemovedAfterItsTime(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        let old = Timestamp(seconds: 1_000)
        for fid in ["fidUnused000000001", "fidUnused000000002", "fidRegistered00001"] {
            #expect(
                try await store.createInstallation(
                    Installation(
                        fid: fid, projectID: "alpha-project", appID: "1:1:android:1", refreshToken: "r",
                        createdAt: old)))
        }
        try await store.createDevice(Device(androidID: 950, securityToken: 1, createdAt: old))
        try await store.createRegistration(
            Registration(
                token: Registration.makeToken(), kind: .app, projectID: "alpha-project", sender: "1", appID: "app",
                subtype: nil, platform: .android, androidID: 950, installationID: "fidRegistered00001",
                createdAt: old))
        #expect(try await store.deleteAbandonedInstallations(createdBefore: old, limit: 100) == 0)
        #expect(try await store.deleteAbandonedInstallations(createdBefore: Timestamp(seconds: 2_000), limit: 100) == 2)
        #expect(try await store.installation(fid: "fidUnused000000001", projectID: "alpha-project") == nil)
        #expect(try await store.installation(fid: "fidRegistered00001", projectID: "alpha-project") != nil)
    }

    /// A project holds one APNs credential of each kind: setting one replaces the same
    /// kind, removing one leaves the other, and each change moves the credentials revision.
    @Test(arguments: Backend.allCases)
    func aProjectHoldsOneAPNsCredentialOfEachKind(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        let at = Timestamp(seconds: 1_000)
        let token = APNsCredential(
            projectID: "alpha-project",
            secret: .signingKey(keyID: "KEY1234567", teamID: "TEAM123456", privateKeyPEM: "pem"),
            bundleID: "com.example.app", environment: .both, createdAt: at)
        let certificate = APNsCredential(
            projectID: "alpha-project", secret: .certificate(bytes: [1, 2, 3], password: "secret"),
            bundleID: "com.example.app", environment: .production, createdAt: at)
        #expect(try await store.apnsCredentials(projectID: "alpha-project").isEmpty)
        let revision = try await store.credentialsRevision()
        try await store.setAPNsCredential(certificate)
        try await store.setAPNsCredential(token)
        #expect(try await store.credentialsRevision() > revision)
        #expect(try await store.apnsCredentials(projectID: "alpha-project") == [token, certificate])
        var replaced = token
        replaced.secret = .signingKey(keyID: "KEY7654321", teamID: "TEAM123456", privateKeyPEM: "other")
        replaced.environment = .development
        try await store.setAPNsCredential(replaced)
        #expect(try await store.apnsCredentials(projectID: "alpha-project") == [replaced, certificate])
        #expect(try await store.removeAPNsCredential(projectID: "alpha-project", kind: .token))
        #expect(!(try await store.removeAPNsCredential(projectID: "alpha-project", kind: .token)))
        #expect(try await store.apnsCredentials(projectID: "alpha-project") == [certificate])
        var unknown = token
        unknown.projectID = "no-such-project"
        await #expect(throws: StoreError.notFound("project")) { try await store.setAPNsCredential(unknown) }
    }

    /// SEMANTICS R1: one key for the hand-off to FCM a project, replaced, removed, and
    /// counted as a credentials change every node reloads.
    @Test(arguments: Backend.allCases)
    func R1_aProjectHoldsOneKeyForTheHandOffToFCM(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        func key(_ id: String) -> FCMRelayCredential {
            FCMRelayCredential(
                projectID: "alpha-project", googleProjectID: "google-\(id)", clientEmail: "relay@\(id).example",
                privateKeyID: id, privateKeyPEM: "PEM \(id)", tokenURI: "https://oauth2.example/token",
                createdAt: Timestamp(seconds: 7))
        }
        #expect(try await store.fcmRelayCredential(projectID: "alpha-project") == nil)
        let revision = try await store.credentialsRevision()
        try await store.setFCMRelayCredential(key("a"))
        #expect(try await store.credentialsRevision() != revision)
        try await store.setFCMRelayCredential(key("b"))
        #expect(try await store.fcmRelayCredential(projectID: "alpha-project") == key("b"))
        #expect(try await store.fcmRelayCredential(projectID: "beta") == nil)
        #expect(try await store.removeFCMRelayCredential(projectID: "alpha-project"))
        #expect(try await store.removeFCMRelayCredential(projectID: "alpha-project") == false)
        #expect(try await store.fcmRelayCredential(projectID: "alpha-project") == nil)
        var unknown = key("c")
        unknown.projectID = "nobody"
        await #expect(throws: StoreError.notFound("project")) { try await store.setFCMRelayCredential(unknown) }
    }

    /// SEMANTICS R1, R3: a token handed to FCM is kept as such, its entries are claimed for
    /// FCM, and FCM's taking one is its `handed_off` event.
    @Test(arguments: Backend.allCases)
    func R1_aTokenHandedToFCMIsStoredAndItsEntriesClaimed(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        try await store.createDevice(Device(androidID: 9, securityToken: 1, createdAt: Timestamp(seconds: 1)))
        try await store.createRegistration(
            Registration.relayedToFCM(
                token: "g:APA91bGOOGLE", projectID: "alpha-project", sender: "1", androidID: 9,
                at: Timestamp(seconds: 2)))
        #expect(try await store.registration(token: "g:APA91bGOOGLE")?.isRelayedToFCM == true)
        #expect(try await store.registration(token: "g:APA91bGOOGLE")?.apns == nil)
        var entry = queued("r1", device: 9, expires: 10_000)
        entry.token = "g:APA91bGOOGLE"
        try await store.appendMessages([], queue: [entry])
        let claimed = try await store.claimHandOffs(
            limit: 10, now: Timestamp(seconds: 200), until: Timestamp(seconds: 230))
        #expect(claimed.map(\.entry.persistentID) == ["r1"] && claimed.first?.destination == .fcm)
        // FCM's 200 is the message's `handed_off` event (E1), counted as delivered.
        #expect(try await store.acknowledge(batch: [9: ["r1"]]) == 1)
        let events = try await store.events(
            projectID: "alpha-project", after: 0, limit: 10, filter: EventFilter(messageID: "r1"))
        #expect(events.map(\.type) == [.handedOff])
    }

    /// SEMANTICS W1: a project's application server key is kept once made; a second one made
    /// at the same time (another node) gives way to it.
    @Test(arguments: Backend.allCases)
    func W1_aProjectKeepsTheFirstWebPushKeyMadeForIt(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        func key(_ byte: UInt8, project: String = "alpha-project") -> WebPushKey {
            WebPushKey(
                projectID: project, privateKey: [UInt8](repeating: byte, count: 32),
                publicKey: [4] + [UInt8](repeating: byte, count: 64), createdAt: Timestamp(seconds: 3))
        }
        #expect(try await store.webPushKey(projectID: "alpha-project") == nil)
        #expect(try await store.keepWebPushKey(key(1)) == key(1))
        #expect(try await store.keepWebPushKey(key(2)) == key(1))
        #expect(try await store.webPushKey(projectID: "alpha-project") == key(1))
        #expect(try await store.webPushKey(projectID: "beta") == nil)
        await #expect(throws: StoreError.notFound("project")) {
            try await store.keepWebPushKey(key(3, project: "nobody"))
        }
    }

    /// SEMANTICS W1, W3: a web registration at a browser's push service keeps its endpoint, its
    /// entries are claimed for that endpoint, and the service's taking one is `handed_off`.
    @Test(arguments: Backend.allCases)
    func W1_aWebRegistrationAtABrowsersPushServiceIsStoredAndItsEntriesClaimed(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        let endpoint = "https://updates.push.services.mozilla.com/wpush/v2/gAAAAABk"
        try await store.createDevice(Device(androidID: 11, securityToken: 1, createdAt: Timestamp(seconds: 1)))
        try await store.createRegistration(
            Registration(
                token: "w:APA91bWEB", kind: .app, projectID: "alpha-project", sender: "1", appID: "1:1:web:a",
                subtype: nil, platform: .web, androidID: 11,
                webKeys: WebPushKeys(p256dh: [4, 1], auth: [2, 3], coding: "aes128gcm"), webPushEndpoint: endpoint,
                createdAt: Timestamp(seconds: 2)))
        let stored = try await store.registration(token: "w:APA91bWEB")
        #expect(stored?.webPushEndpoint == endpoint && stored?.isHandedOff == true)
        #expect(stored?.apns == nil && stored?.isRelayedToFCM == false && stored?.webKeys?.coding == "aes128gcm")
        var entry = queued("w1", device: 11, expires: 10_000)
        entry.token = "w:APA91bWEB"
        try await store.appendMessages([], queue: [entry])
        let claimed = try await store.claimHandOffs(
            limit: 10, now: Timestamp(seconds: 200), until: Timestamp(seconds: 230))
        #expect(claimed.map(\.entry.persistentID) == ["w1"])
        #expect(claimed.first?.destination == .webPush(endpoint: endpoint))
        #expect(try await store.acknowledge(batch: [11: ["w1"]]) == 1)
        let events = try await store.events(
            projectID: "alpha-project", after: 0, limit: 10, filter: EventFilter(messageID: "w1"))
        #expect(events.map(\.type) == [.handedOff])
    }

    @Test(arguments: Backend.allCases)
    func aRotatedSecretKeepsThePreviousOneForAnHour(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        let first = try await SecretRotation.load(named: "signing", from: store) { [1, 2, 3] }
        #expect(first.current == [1, 2, 3])
        #expect(first.previous == nil)
        let revision = try await store.credentialsRevision()
        try await store.rotateSecret(named: "signing", to: [4, 5, 6], at: Timestamp(seconds: 100))
        let rotated = try await SecretRotation.load(named: "signing", from: store) { [9] }
        #expect(rotated.current == [4, 5, 6])
        #expect(rotated.previous?.value == [1, 2, 3])
        #expect(rotated.previous?.acceptedUntil == Timestamp(seconds: 100 + 3600))
        #expect(try await store.credentialsRevision() != revision)
    }

    @Test(arguments: Backend.allCases)
    func L7_aDevicesReceiptOfAMessageCountsOncePerKind(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        try await store.appendMessages([sampleMessage("m1")])
        let stat = DeliveryStat(
            DeliveryStatKey(projectID: "alpha-project", at: Timestamp(seconds: 5), appID: "app", label: nil), .opened)
        #expect(try await store.recordReceipt(stat, messageID: "m1", androidID: 42))
        #expect(try await store.recordReceipt(stat, messageID: "m1", androidID: 42) == false)
        #expect(try await store.recordReceipt(stat, messageID: "m1", androidID: 43))
        var impression = stat
        impression.counter = .impressions
        #expect(try await store.recordReceipt(impression, messageID: "m1", androidID: 42))
        let day = CalendarDay(Timestamp(seconds: 5))
        let row = try await store.deliveryReport(projectID: "alpha-project", appID: "app", from: day, through: day)
        #expect(row.first?[.opened] == 2)
        #expect(row.first?[.impressions] == 1)
        #expect(try await store.receiptCounts(messageID: "m1") == [.opened: 2, .impressions: 1])
        #expect(try await store.receiptCounts(messageID: "m2").isEmpty)
    }

    @Test(arguments: Backend.allCases)
    func aMessagesFanoutProgressIsKnownByItsId(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        let job = FanoutJob(
            messageID: "f1", projectID: "alpha-project", audience: .topic("news"), body: #"{"data":{"k":"v"}}"#,
            createdAt: Timestamp(seconds: 5), expiresAt: Timestamp(seconds: 3605))
        try await store.createFanout(sampleMessage("f1"), job: job, stats: [])
        let progress = try await store.fanoutProgress(messageID: "f1")
        #expect(progress?.state == .queued && progress?.reached == 0)
        _ = try await store.startFanout(messageID: "f1", firstDevices: [])
        try await store.storeFanoutPage(
            messageID: "f1", queue: [], firstDone: 0, cursor: "", reached: 3, done: true, limits: .unlimited, stats: [])
        let done = try await store.fanoutProgress(messageID: "f1")
        #expect(done?.state == .done && done?.reached == 3)
        #expect(try await store.fanoutProgress(messageID: "m1") == nil)
    }

    /// L7: pending is what is still queued, per day, app and label, whichever way an entry leaves.
    @Test(arguments: Backend.allCases)
    func L7_pendingCountsWhatIsStillQueuedPerDayAppAndLabel(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        func entry(_ id: String, day: Int64, label: String = "spring", expires: Int64 = 900_000) -> QueuedMessage {
            var entry = queued(id, expires: expires)
            entry.createdAt = Timestamp(seconds: day * 86_400 + 100)
            entry.appID = "app"
            entry.analyticsLabel = label
            return entry
        }
        try await store.appendMessages(
            [],
            queue: [
                entry("a", day: 1), entry("b", day: 1), entry("c", day: 1, label: ""),
                entry("d", day: 2, expires: 86_400 * 2 + 200),
            ])
        func pending() async throws -> [String: Int] {
            let rows = try await store.deliveryReport(
                projectID: "alpha-project", appID: nil, from: CalendarDay(Timestamp(seconds: 0)),
                through: CalendarDay(Timestamp(seconds: 10 * 86_400)))
            return rows.reduce(into: [:]) { $0["\($1.key.day) \($1.key.label)"] = $1.pending }
        }
        #expect(try await pending() == ["1970-01-02 spring": 2, "1970-01-02 ": 1, "1970-01-03 spring": 1])
        try await store.acknowledge(androidID: 42, persistentIDs: ["a"])
        _ = try await store.deleteExpired(now: Timestamp(seconds: 86_400 * 2 + 300), limit: 10)
        let left = try await pending()
        #expect(left["1970-01-02 spring"] == 1 && left["1970-01-02 "] == 1 && (left["1970-01-03 spring"] ?? 0) == 0)
        let narrow = try await store.deliveryReport(
            projectID: "alpha-project", appID: "app", from: CalendarDay(Timestamp(seconds: 86_400)),
            through: CalendarDay(Timestamp(seconds: 86_400)))
        #expect(narrow.reduce(0) { $0 + $1.pending } == 2)
    }

    @Test(arguments: Backend.allCases)
    func L4_queuedMessagesComeBackInOrderUntilAcknowledged(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        try await store.appendMessages([], queue: [queued("a"), queued("b")])
        try await store.appendMessages([], queue: [queued("c"), queued("x", device: 43)])
        let now = Timestamp(seconds: 200)
        let all = try await store.pendingMessages(androidID: 42, after: 0, limit: 10, now: now)
        #expect(all.map(\.persistentID) == ["a", "b", "c"])
        #expect(all.map(\.sequence) == all.map(\.sequence).sorted())
        #expect(all[0].stanza == [1, 2, 3])
        let page = try await store.pendingMessages(androidID: 42, after: all[0].sequence, limit: 1, now: now)
        #expect(page.map(\.persistentID) == ["b"])
        #expect(try await store.acknowledge(androidID: 42, persistentIDs: ["a", "c", "zzz"]) == 2)
        #expect(try await store.acknowledge(androidID: 43, persistentIDs: ["b"]) == 0)
        #expect(
            try await store.pendingMessages(androidID: 42, after: 0, limit: 10, now: now).map(\.persistentID) == ["b"])
        #expect(try await store.queuedCount(androidID: 43) == 1)
    }

    @Test(arguments: Backend.allCases)
    func D5_expiredQueueEntriesAreNotHandedOut(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        try await store.appendMessages([], queue: [queued("old", expires: 150), queued("new", expires: 500)])
        let pending = try await store.pendingMessages(androidID: 42, after: 0, limit: 10, now: Timestamp(seconds: 200))
        #expect(pending.map(\.persistentID) == ["new"])
    }

    @Test(arguments: Backend.allCases)
    func aDuplicatePersistentIDOnOneDeviceFailsTheWholeAppend(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        try await store.appendMessages([], queue: [queued("a")])
        await #expect(throws: StoreError.self) {
            try await store.appendMessages([sampleMessage("m9")], queue: [queued("b"), queued("a")])
        }
        #expect(try await store.message(id: "m9") == nil)
        #expect(try await store.queuedCount(androidID: 42) == 1)
    }

    @Test(arguments: Backend.allCases)
    func deletingAProjectRemovesItsRegistrationsAndQueues(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        try await store.createRegistration(sampleRegistration("t1"))
        try await store.appendMessages([], queue: [queued("a")])
        _ = try await store.deleteProject(id: "alpha-project")
        #expect(try await store.registration(token: "t1") == nil)
        #expect(try await store.queuedCount(androidID: 42) == 0)
    }
}
