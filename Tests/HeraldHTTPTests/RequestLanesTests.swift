import Dispatch
import Glibc
import HTTPTypes
import HeraldCore
import HeraldTestSupport
import NIOPosix
import Synchronization
import Testing

@testable import HeraldHTTP

/// SEMANTICS T1 (overload): an overloaded project's accepted sends wait behind other work
/// for a thread, never in place of it and never for ever.
@Suite struct RequestLanesTests {
    /// What ran, in order.
    final class Log: Sendable {
        let entries = Mutex<[String]>([])
    }

    /// Runs `queue` while the lanes' pool, a serial one, is held by a job that spins, then
    /// lets it go and answers the order in which the queued jobs ran. `queue` is given the
    /// lanes and a log to append to, and answers the tasks it started and how many jobs
    /// each lane should then hold.
    func order(
        _ queue: (RequestLanes, Log) -> (tasks: [Task<Void, Never>], first: Int, after: Int)
    ) async throws -> [String] {
        let lanes = RequestLanes(pool: DispatchQueue(label: "herald-lanes-test"))
        let held = Atomic<Bool>(true)
        let holding = Atomic<Bool>(false)
        let holder = Task(executorPreference: lanes.first) {
            holding.store(true, ordering: .releasing)
            while held.load(ordering: .acquiring) { sched_yield() }
        }
        while !holding.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(1)) }
        let log = Log()
        let (tasks, first, after) = queue(lanes, log)
        while lanes.waiting != (first, after) { try await Task.sleep(for: .milliseconds(1)) }
        held.store(false, ordering: .releasing)
        await holder.value
        for task in tasks { await task.value }
        return log.entries.withLock { $0 }
    }

    @Test func T1_workInTheFirstLaneRunsBeforeWorkInTheAfterLane() async throws {
        let ran = try await order { lanes, log in
            var tasks: [Task<Void, Never>] = []
            for index in 0..<3 {
                tasks.append(
                    Task(executorPreference: lanes.after) { log.entries.withLock { $0.append("after \(index)") } })
            }
            for index in 0..<3 {
                tasks.append(
                    Task(executorPreference: lanes.first) { log.entries.withLock { $0.append("first \(index)") } })
            }
            return (tasks, 3, 3)
        }
        #expect(ran == ["first 0", "first 1", "first 2", "after 0", "after 1", "after 2"])
    }

    @Test func T1_theAfterLaneIsNotStarvedByABusyFirstLane() async throws {
        let runs = RequestLanes.firstRunsInARow
        let ran = try await order { lanes, log in
            var tasks = [Task(executorPreference: lanes.after) { log.entries.withLock { $0.append("after") } }]
            for index in 0..<(runs + 4) {
                tasks.append(
                    Task(executorPreference: lanes.first) { log.entries.withLock { $0.append("first \(index)") } })
            }
            return (tasks, runs + 4, 1)
        }
        #expect(ran.count == runs + 5)
        #expect(ran.firstIndex(of: "after") == runs)
    }

    @Test func T1_anAcceptedSendOfAProjectRefusedLatelyRunsInTheAfterLane() async throws {
        let server = try await TestServer.make(downstreamPerMinute: 1)
        try await server.test { client in
            let token = try await server.accessToken(client)
            func send() async throws -> HTTPResponse.Status {
                try await TestServer.send(
                    #"{"message":{"topic":"a"}}"#, project: server.project.id, token: token, client: client
                ).status
            }
            func counted(_ name: String) async throws -> Int {
                let metrics = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
                let line = metrics.split(separator: "\n").first { $0.hasPrefix(#"\#(name){project="test-project"} "#) }
                return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
            }
            #expect(try await send() == .ok)
            #expect(try await counted("herald_sends_deferred_total") == 0)
            // Refused half a second before the first send leaves the window: the project
            // stays marked for a second after the refusal, and its room comes back in it.
            server.clock.advance(milliseconds: 59_500)
            #expect(try await send() == .tooManyRequests)
            server.clock.advance(milliseconds: 600)
            #expect(try await send() == .ok)
            #expect(try await counted("herald_sends_deferred_total") == 1)
            // Once the mark is gone, an accepted send is not deferred.
            server.clock.advance(milliseconds: 61_000)
            #expect(try await send() == .ok)
            #expect(try await counted("herald_messages_accepted_total") == 3)
            #expect(try await counted("herald_sends_deferred_total") == 1)
        }
    }

    /// A request's task stays on the thread that woke it: it starts on the loop that
    /// queued it, and after waiting for work done on another loop it goes on there, with
    /// no hand-over to a pool of other threads in between.
    @Test func aTaskInALaneRunsOnTheLoopThatWokeIt() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let lanes = RequestLanes(loops: group)
        let (reader, device) = (group.next(), group.next())
        let task = try await reader.submit {
            Task(executorPreference: lanes.first) { () -> [Bool] in
                let started = reader.inEventLoop
                // Handed to the device's loop from a job the reader's loop runs after this
                // turn, so that the task has surely suspended when it is resumed (a resume
                // that comes first lets the task go on where it suspended).
                await withCheckedContinuation { resumed in
                    reader.execute { device.execute { resumed.resume() } }
                }
                return [started, device.inEventLoop]
            }
        }.get()
        #expect(await task.value == [true, true])
        try await group.shutdownGracefully()
    }
}
