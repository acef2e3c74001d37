import Foundation
import HeraldCore
import Testing

/// Settings stored before a setting existed read back with its default.
@Suite struct ProjectSettingsTests {
    @Test func settingsStoredBeforeANewSettingKeepItsDefault() throws {
        var older = ProjectSettings()
        older.maxPending = 7
        var json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(older)) as! [String: Any]
        json.removeValue(forKey: "webPushKeys")
        json.removeValue(forKey: "upstreamWaiting")
        let read = try JSONDecoder().decode(ProjectSettings.self, from: JSONSerialization.data(withJSONObject: json))
        #expect(read.maxPending == 7)
        #expect(read.webPushKeys.isEmpty)
        #expect(read.upstreamWaiting == ProjectSettings().upstreamWaiting)
    }

    @Test func T5_upstreamWaitingIsASetting() throws {
        var settings = ProjectSettings()
        try settings.apply("upstream-waiting=5")
        #expect(settings.upstreamWaiting == 5)
    }
}
