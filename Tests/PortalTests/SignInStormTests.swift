import Audit
import Foundation
import Hummingbird
import Portal
import SignIn
import PortalWeb
import Storage
import XCTest

/// A storm of sign-ins against locked names and addresses, or while PAM hangs, must not write one
/// chained audit entry per attempt: the first refusal has its own entry, the rest one with a count.
final class SignInStormTests: XCTestCase {
    func testRefusalsOfALockedNameAreSummedUpWhenTheLockEnds() async throws {
        try await PortalHarness.run { portal in
            for _ in 0..<5 { _ = try await portal.browser().signIn("tt-storm-name", "wrong") }
            let countersBefore = try await portal.count("SELECT COALESCE(SUM(hits), 0) AS n FROM rate_slots")
            for attempt in 0..<20 {
                let start = ContinuousClock.now
                let refused = try await portal.browser().signIn("TT-Storm-Name", "wrong")
                if attempt == 0 {
                    XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .milliseconds(250), "a free refusal is not answered at once")
                }
                XCTAssertEqual(refused.status, .tooManyRequests)
                XCTAssertEqual(refused.headers[.retryAfter], "900")
            }
            let reasons = try await portal.auditActions("signin").map { $0.detailValues["reason"] ?? "" }
            XCTAssertEqual(reasons, Array(repeating: "authentication_failed", count: 5) + ["throttled"], "only the first refusal is its own entry")
            let countersAfter = try await portal.count("SELECT COALESCE(SUM(hits), 0) AS n FROM rate_slots")
            XCTAssertEqual(countersAfter, countersBefore, "a locked name is refused without counting")

            portal.clock.advance(seconds: 15 * 60 + 1)
            try await portal.portal.runCleanup()
            let summary = try await portal.auditActions("signin").last
            XCTAssertEqual(summary?.actor, "tt-storm-name")
            XCTAssertEqual(summary?.detailValues, ["reason": "throttled", "scope": "user", "refused": "20"])
            // The lock is gone, and so is its count: a second cleanup writes nothing more.
            try await portal.portal.runCleanup()
            let entries = try await portal.auditActions("signin")
            XCTAssertEqual(entries.count, 7)
            let after = try await portal.browser().signIn("tt-storm-name", "wrong")
            XCTAssertEqual(after.status, .unauthorized, "the next attempt reaches PAM again")
        }
    }

    func testRefusalsOfALockedAddressAreSummedUpWhenAnAdminLiftsTheLock() async throws {
        try await PortalHarness.run(configure: { $0.signInFailuresPerAddress = 3 }) { portal in
            let sprayer = "203.0.113.77"
            for name in ["spray-a", "spray-b", "spray-c"] { _ = try await portal.browser(address: sprayer).signIn(name, "guess") }
            for index in 0..<4 {
                let refused = try await portal.browser(address: sprayer).signIn("spray-\(index)", "guess")
                XCTAssertEqual(refused.status, .tooManyRequests)
            }
            let admin = try await portal.signedIn(.admin)
            let page = try await admin.get("/admin/lockouts")
            let lifted = try await admin.post("/admin/lockouts/lift", ["csrf": page.hidden("csrf") ?? "", "scope": "address", "key": sprayer])
            XCTAssertEqual(lifted.location, "/admin/lockouts?result=lifted")
            let fromSprayer = try await portal.auditActions("signin").filter { $0.address == sprayer }
            XCTAssertEqual(fromSprayer.map { $0.detailValues["reason"] ?? "" },
                           ["authentication_failed", "authentication_failed", "authentication_failed", "throttled", "throttled"])
            XCTAssertEqual(fromSprayer.last?.detailValues, ["reason": "throttled", "scope": "address", "refused": "4"])
            XCTAssertNil(fromSprayer.last?.actor)
        }
    }

    func testAnEndedLockNotYetPurgedStartsItsRefusalCountAgain() async throws {
        try await PortalHarness.run { portal in
            for _ in 0..<5 { _ = try await portal.browser().signIn("tt-relock", "wrong") }
            for _ in 0..<3 { _ = try await portal.browser().signIn("tt-relock", "wrong") }
            // The lock runs out; before the cleanup purges it, five new failures lock the name again.
            portal.clock.advance(seconds: 15 * 60 + 1)
            for _ in 0..<5 { _ = try await portal.browser().signIn("tt-relock", "wrong") }
            let refused = try await portal.browser().signIn("tt-relock", "wrong")
            XCTAssertEqual(refused.status, .tooManyRequests)
            let reasons = try await portal.auditActions("signin").map { $0.detailValues["reason"] ?? "" }
            XCTAssertEqual(reasons.filter { $0 == "throttled" }.count, 2, "the new lock's first refusal has its own entry")
        }
    }

    func testTheGateGivesOneAddressAQuarterOfItsPlaces() async throws {
        let gate = SignInGate(limit: 8)
        XCTAssertEqual(gate.limitPerAddress, 2)
        let streams = (0..<2).map { _ in AsyncStream<Void>.makeStream() }
        let held = Task {
            await withTaskGroup(of: Int?.self) { group in
                for (release, _) in streams {
                    group.addTask { await gate.ifRoom(for: "192.0.2.1") { for await _ in release { break }; return 1 } }
                }
                return await group.reduce(0) { $0 + ($1 ?? 0) }
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        let sameAddress = await gate.ifRoom(for: "192.0.2.1") { 1 }
        XCTAssertNil(sameAddress, "a third sign-in from one address waits for none of the others' places")
        let otherAddress = await gate.ifRoom(for: "192.0.2.2") { 1 }
        XCTAssertEqual(otherAddress, 1)
        for (_, releaser) in streams { releaser.finish() }
        let finished = await held.value
        XCTAssertEqual(finished, 2)
        let afterwards = await gate.ifRoom(for: "192.0.2.1") { 1 }
        XCTAssertEqual(afterwards, 1, "places are given back")
    }

    /// A directory that hangs: the sign-in ends at --pam-timeout with the "unavailable" page; once
    /// the only PAM thread is stuck, further sign-ins are turned away at once, and only the first
    /// of them is an audit entry of its own.
    func testAHangingDirectoryEndsSignInsAtTheTimeoutAndBusyRefusalsAreSummedUp() async throws {
        let hangFile = "/etc/teletan-portal-test/hang-seconds"
        guard FileManager.default.fileExists(atPath: "/etc/pam.d/teletan-portal-hang-test") else {
            let missing = "PAM service teletan-portal-hang-test not installed (scripts/install-pam-stack.sh)"
            if ProcessInfo.processInfo.environment["PORTAL_PAM_TESTS"] == "1" { return XCTFail(missing) }
            throw XCTSkip(missing)
        }
        try "4\n".write(toFile: hangFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: hangFile) }
        try await PortalHarness.run(configure: {
            $0.pamService = "teletan-portal-hang-test"
            $0.pamThreads = 1
            $0.pamTimeout = .seconds(1)
        }) { portal in
            let start = ContinuousClock.now
            let first = Task { try await portal.browser().signIn("tt-officer", "Officer-Pass-1") }
            // While that one waits for PAM, the gate (as many sign-ins at once as PAM threads) is full.
            try await Task.sleep(for: .milliseconds(300))
            let crowded = try await portal.browser().signIn("tt-hotline", "Hotline-Pass-1")
            XCTAssertEqual(crowded.status, .tooManyRequests)
            XCTAssertEqual(crowded.headers[.retryAfter], "5")
            XCTAssertTrue(crowded.body.contains("Too many sign-ins are under way at the moment."))
            XCTAssertTrue(crowded.body.contains("value=\"tt-hotline\""), "the typed name is kept")
            let waited = try await first.value
            let took = ContinuousClock.now - start
            XCTAssertEqual(waited.status, .serviceUnavailable)
            XCTAssertTrue(waited.body.contains("Sign-in is unavailable right now."))
            XCTAssertGreaterThanOrEqual(took, .milliseconds(900))
            XCTAssertLessThan(took, .seconds(3), "ended at --pam-timeout, not when PAM answered")
            for _ in 0..<5 {
                let busy = try await portal.browser().signIn("tt-officer", "Officer-Pass-1")
                XCTAssertEqual(busy.status, .serviceUnavailable)
                XCTAssertEqual(busy.headers[.retryAfter], "5")
            }
            let reasons = try await portal.auditActions("signin").map { $0.detailValues["reason"] ?? "" }
            XCTAssertEqual(reasons, ["too_many_at_once", "pam_timeout", "pam_busy"])
            try await portal.portal.runCleanup()
            let summary = try await portal.auditActions("signin").last
            XCTAssertEqual(summary?.detailValues, ["reason": "pam_busy", "refused": "4"])
            // No attempt was counted against the name: PAM never gave a verdict.
            let verdict = try await portal.portal.signIn.throttle.check(username: "tt-officer", address: nil, now: portal.clock.now, on: portal.db)
            XCTAssertEqual(verdict, .allowed)
        }
    }
}
