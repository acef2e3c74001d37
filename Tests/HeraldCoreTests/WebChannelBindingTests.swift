import HeraldCore
import Testing

/// Which project may build web registrations on a browser's push channel: a channel
/// restricted to a site key only one holding that key.
@Suite struct WebChannelBindingTests {
    let siteKey = Base64URL.encode([4] + [UInt8](repeating: 7, count: 64))
    let otherKey = Base64URL.encode([4] + [UInt8](repeating: 9, count: 64))

    func project(_ id: String, number: Int64, keys: [String] = []) -> Project {
        var project = Project(
            id: id, number: number, apiKey: "AIza", serverKey: "AAAA", createdAt: Timestamp(milliseconds: 0))
        project.settings.webPushKeys = keys
        return project
    }

    func refusal(
        _ sender: String, _ project: Project, key: String? = nil, owner: Bool = false, bound: Set<String> = []
    ) -> WebChannelBinding.Refusal? {
        WebChannelBinding.refusal(
            channelSender: sender, project: project, applicationPubKey: key, ownerProven: owner, boundProjects: bound)
    }

    @Test func aChannelRestrictedToASiteKeyBindsOnlyToAProjectHoldingIt() {
        let beta = project("beta", number: 2)
        let alpha = project("alpha", number: 1, keys: [siteKey])
        #expect(refusal(siteKey, beta) == .siteKeyNotHeld)
        #expect(refusal(siteKey, beta, key: siteKey) == .siteKeyNotHeld)
        #expect(refusal(siteKey, alpha) == nil)
        #expect(refusal(siteKey, alpha, key: siteKey) == nil)
        #expect(refusal(siteKey, alpha, key: otherKey) == .keyMismatch)
        #expect(refusal(otherKey, alpha) == .siteKeyNotHeld)
    }

    @Test func aChannelForASenderIDBindsOnlyToThatProject() {
        #expect(refusal("1", project("alpha", number: 1)) == nil)
        #expect(refusal("1", project("beta", number: 2)) == .otherSender)
    }

    @Test func aChannelForFirebasesDefaultKeyOrNoKeyBelongsToTheFirstProject() {
        let alpha = project("alpha", number: 1)
        let beta = project("beta", number: 2)
        for sender in [WebChannelBinding.firebaseDefaultKey, "herald-web-push"] {
            #expect(refusal(sender, alpha) == nil)
            #expect(refusal(sender, alpha, bound: ["alpha"]) == nil)
            #expect(refusal(sender, beta, bound: ["alpha"]) == .boundElsewhere)
        }
    }

    @Test func theChannelsOwnDeviceMayBindItAnywhere() {
        #expect(refusal(siteKey, project("beta", number: 2), owner: true) == nil)
        #expect(refusal("1", project("beta", number: 2), owner: true) == nil)
    }

    @Test func webPushKeysAreSetAsACommaSeparatedListOfPublicKeys() throws {
        var settings = ProjectSettings()
        try settings.apply("web-push-keys=\(siteKey),\(otherKey)")
        #expect(settings.webPushKeys == [siteKey, otherKey])
        #expect(throws: SettingError.self) { try settings.apply("web-push-keys=not-a-key") }
        #expect(settings.webPushKeys == [siteKey, otherKey])
        try settings.apply("web-push-keys=")
        #expect(settings.webPushKeys.isEmpty)
    }
}
