import AsyncHTTPClient
import Foundation
import Logging
import TestSupport
import XCTest
@testable import Portal
@testable import PortalWeb

/// SIGTERM (here: the service group's graceful shutdown, as the signal triggers it) first turns
/// `/health/ready` to 503 while the portal still serves, for the drain period; only then does the
/// listener close. Load balancers that check readiness stop sending before connections fail.
final class ShutdownDrainTests: XCTestCase {
    // From the port range of the deployment tests' branch (Tests/deploy uses 18200-18204).
    static let port = 18290, metricsPort = 18291

    func testReadyTurns503OnShutdownWhileTheListenerStillServes() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var config = PortalConfiguration()
        config.database = .sqlite(path: directory.appendingPathComponent("portal.sqlite").path)
        config.secretFile = directory.appendingPathComponent("secret").path
        config.auditCheckpointKey = directory.appendingPathComponent("audit-checkpoint-key.pem").path
        config.port = Self.port
        config.metricsPort = Self.metricsPort
        config.shutdownDrain = .seconds(2)
        let log = LogRecorder()
        let portal = try await PortalApp(configuration: config, logger: log.logger())
        let group = portal.makeServiceGroup(handlingSignals: false)
        let running = Task { try await group.run() }
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            try await waitUntil { (try? await self.status(http, "/health/ready")) == 200 }
            let beforeDrain = try await get(http, "/signin")
            XCTAssertNil(beforeDrain.connection, "connections are kept open while the instance is ready")
            let start = ContinuousClock.now
            await group.triggerGracefulShutdown()
            try await waitUntil { (try? await self.status(http, "/health/ready")) == 503 }
            // Not ready, and still serving: the liveness check and the pages answer.
            let live = try await status(http, "/health/live")
            XCTAssertEqual(live, 200)
            let signIn = try await get(http, "/signin")
            XCTAssertEqual(signIn.status, 200)
            // ...and every answer asks the client (nginx's connection pool) not to send on this
            // connection again: the listener's close cannot race with a POST sent on it.
            XCTAssertEqual(signIn.connection, "close")
            let notFound = try await get(http, "/no-such-page")
            XCTAssertEqual(notFound.status, 404)
            XCTAssertEqual(notFound.connection, "close")
            XCTAssertLessThan(ContinuousClock.now - start, .seconds(2), "all of this within the drain period")
            // After the drain period the listener closes and the group ends.
            try await running.value
            XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .seconds(2))
            let afterwards = try? await status(http, "/health/live")
            XCTAssertNil(afterwards, "the listener is closed")
            XCTAssertTrue(log.lines.contains { $0.message.hasPrefix("shutting down: /health/ready answers 503") })
        } catch {
            running.cancel()
            try await http.shutdown()
            await portal.shutdown()
            throw error
        }
        try await http.shutdown()
        await portal.shutdown()
    }

    private func status(_ http: HTTPClient, _ path: String) async throws -> Int {
        try await get(http, path).status
    }

    private func get(_ http: HTTPClient, _ path: String) async throws -> (status: Int, connection: String?) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(Self.port)\(path)")
        request.headers.add(name: "Host", value: "127.0.0.1:\(Self.port)")
        let response = try await http.execute(request, timeout: .seconds(2))
        _ = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), response.headers.first(name: "Connection"))
    }

    private func waitUntil(_ condition: @escaping () async -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if await condition() { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        XCTFail("condition not met within 10 s")
    }
}
