import HeraldCore
import HeraldXMPP
import Testing

/// SEMANTICS T5 for app-server connections: new ones a minute and open ones at once.
@Suite struct XMPPConnectionLimitsTests {
    private func project(connectsPerMinute: Int, connections: Int) -> Project {
        var project = Project.make(id: "xmpp-project", createdAt: Timestamp(milliseconds: 0))
        project.settings.xmppConnectsPerMinute = connectsPerMinute
        project.settings.xmppConnections = connections
        return project
    }

    @Test func T5_aProjectHoldsAtMostItsConnectionsAtOnce() {
        let limits = XMPPConnectionLimits()
        let project = project(connectsPerMinute: 100, connections: 2)
        let now = Timestamp(milliseconds: 0)
        #expect(limits.admit(project, now: now))
        #expect(limits.admit(project, now: now))
        #expect(!limits.admit(project, now: now))
        limits.release(projectID: project.id)
        #expect(limits.openConnections(projectID: project.id) == 1)
        #expect(limits.admit(project, now: now))
    }

    @Test func T5_aProjectOpensAtMostItsConnectsAMinute() {
        let limits = XMPPConnectionLimits()
        let project = project(connectsPerMinute: 2, connections: 100)
        let start = Timestamp(milliseconds: 120_000)
        #expect(limits.admit(project, now: start))
        #expect(limits.admit(project, now: start.adding(milliseconds: 1_000)))
        #expect(!limits.admit(project, now: start.adding(milliseconds: 59_000)))
        #expect(limits.openConnections(projectID: project.id) == 2)
        #expect(limits.admit(project, now: start.adding(milliseconds: 60_000)))
        // Another project is counted apart.
        var other = project
        other.id = "other-project"
        #expect(limits.admit(other, now: start))
    }
}
