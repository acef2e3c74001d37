import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Testing

/// Conformance for the errors each project was answered with per hour.
@Suite struct ErrorCountConformanceTests {
    @Test(arguments: Backend.allCases)
    func countsAddUpPerHourCodeAndStatusAndOldHoursAreDeleted(_ backend: Backend) async throws {
        let store = try await backend.makeStore()
        let hour = ErrorCount.hour(of: Timestamp(seconds: 7_200 + 1_234))
        #expect(hour == Timestamp(seconds: 7_200))
        let quota = { (project: String, at: Timestamp, count: Int) in
            ErrorCount(projectID: project, hour: at, code: "QUOTA_EXCEEDED", status: 429, count: count)
        }
        try await store.recordErrors([
            quota("alpha-one", hour, 3), quota("beta-one", hour, 5),
            ErrorCount(projectID: "alpha-one", hour: hour, code: "INVALID_ARGUMENT", status: 400, count: 1),
        ])
        try await store.recordErrors([quota("alpha-one", hour, 2), quota("alpha-one", hour.adding(seconds: 3600), 7)])
        let counts = try await store.errorCounts(projectID: "alpha-one", since: hour)
        #expect(counts.map(\.code) == ["INVALID_ARGUMENT", "QUOTA_EXCEEDED", "QUOTA_EXCEEDED"])
        #expect(counts.map(\.count) == [1, 5, 7] && counts.map(\.status) == [400, 429, 429])
        #expect(try await store.errorCounts(projectID: "alpha-one", since: hour.adding(seconds: 1)).map(\.count) == [7])
        #expect(try await store.deleteErrorCounts(before: hour.adding(seconds: 3600), limit: 10) == 3)
        #expect(try await store.errorCounts(projectID: "beta-one", since: Timestamp(seconds: 0)).isEmpty)
        #expect(try await store.errorCounts(projectID: "alpha-one", since: Timestamp(seconds: 0)).count == 1)
    }
}
