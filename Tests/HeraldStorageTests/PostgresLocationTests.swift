import Testing

@testable import HeraldStorage

/// `--store` URLs as libpq takes them, one host or several.
@Suite struct PostgresLocationTests {
    typealias Location = PostgresStore.Location

    @Test func oneHostWithItsUserPasswordPortAndDatabase() throws {
        let location = try #require(Location(url: "postgres://herald:s%40cret@db.internal:6432/push", environment: [:]))
        #expect(location.hosts == [.init(name: "db.internal", port: 6432)])
        #expect(location.user == "herald" && location.password == "s@cret" && location.database == "push")
        #expect(location.redacted == "postgres://herald@db.internal:6432/push")
        #expect(!location.requireTLS)
    }

    @Test func severalHostsEachWithOrWithoutAPortAndTheQueryKept() throws {
        let location = try #require(
            Location(
                url: "postgresql://u:p@h1:5432,h2,[::1]:5434/db?target_session_attrs=read-write&sslmode=require",
                environment: [:]))
        #expect(
            location.hosts == [
                .init(name: "h1", port: 5432), .init(name: "h2", port: 5432), .init(name: "::1", port: 5434),
            ])
        #expect(location.database == "db" && location.requireTLS)
        #expect(location.redacted == "postgres://u@h1:5432,h2:5432,[::1]:5434/db")
    }

    @Test func theUserAndPasswordMayComeFromTheEnvironment() throws {
        let location = try #require(
            Location(url: "postgres://h1,h2/", environment: ["PGUSER": "ops", "PGPASSWORD": "pw"]))
        #expect(location.user == "ops" && location.password == "pw" && location.database == "ops")
        #expect(location.hosts.count == 2)
    }

    @Test func whatIsNotSuchAURLIsRefused() {
        for url in [
            "mysql://h/db", "postgres://", "postgres://h1,,h2/db", "postgres://h1:99999/db", "postgres://h1:x/db",
            "postgres://[::1/db", "postgres://u@/db", "herald.sqlite",
        ] {
            #expect(Location(url: url, environment: [:]) == nil, "\(url)")
        }
    }
}
