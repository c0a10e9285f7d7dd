import AccessControl
import FluentKit
import Foundation
import HTTPTypes
import Storage
import TestSupport
import XCTest
@testable import Hotline
@testable import Issuance
@testable import Portal
@testable import PortalWeb
import VerificationClient

/// The daily quota (issue 28, item 4): predicted from each scope's own history, taken inside the
/// issuing transaction, refused on every issuing path with a 429 that loses nothing, raised by
/// an administrator until the authority's midnight; on SQLite and PostgreSQL.
final class DailyQuotaTests: XCTestCase {
    static let authorities = EventAndRecentTests.authorities
    /// 2027-01-15, in Europe/Berlin.
    static let today = QuotaDay(number: 20833)

    static func history(_ counts: [Int], endingBefore day: QuotaDay = today) -> [QuotaPrediction.Day] {
        counts.enumerated().map { QuotaPrediction.Day(day: day.adding(days: $0.offset - counts.count), issued: $0.element) }
    }

    // MARK: - The prediction

    func testThePredictionIsTheLeastSquaresLineClampedTimesTheFactorRoundedUp() {
        let settings = DailyQuotaSettings()
        // A rising line, 100, 110, ... 230 over 14 days: tomorrow's value is 240, times 1.25 is 300.
        let rising = QuotaPrediction.make(for: Self.today, history: Self.history((0..<14).map { 100 + 10 * $0 }), settings: settings)
        XCTAssertEqual(rising.predicted, 240)
        XCTAssertEqual(rising.quota, 300)
        XCTAssertEqual(rising.basis.count, 14)
        // A flat line of 50 over 21 days: 50, times 1.25 is 62.5, rounded up 63.
        let flat = QuotaPrediction.make(for: Self.today, history: Self.history(Array(repeating: 50, count: 21)), settings: settings)
        XCTAssertEqual(flat.predicted, 50)
        XCTAssertEqual(flat.quota, 63)
        // Noisy points 9, 11, 10, 12, ... 17 at x = -14 ... -1: the least-squares line (numpy.polyfit)
        // has slope 0.523 and the value 16.92 at x = 0, rounded 17.
        let noisy = QuotaPrediction.make(for: Self.today, history: Self.history([2, 4, 3, 5, 4, 6, 5, 7, 6, 8, 7, 9, 8, 10].map { $0 + 7 }), settings: settings)
        XCTAssertEqual(noisy.predicted, 17)
        XCTAssertEqual(noisy.quota, 22, "17 × 1.25 = 21.25, rounded up")
    }

    func testFewerThanFourteenDaysGiveTheFixedQuotaAndOnlyTheLastTwentyOneDaysCount() {
        var settings = DailyQuotaSettings()
        settings.fixed = 700
        let short = QuotaPrediction.make(for: Self.today, history: Self.history(Array(repeating: 50, count: 13)), settings: settings)
        XCTAssertEqual(short, QuotaPrediction(quota: 700, predicted: nil, basis: []))
        // Fourteen days, but one of them 22 days back: 13 days in the window.
        var stale = Self.history(Array(repeating: 50, count: 13))
        stale.append(.init(day: Self.today.adding(days: -22), issued: 50))
        XCTAssertEqual(QuotaPrediction.make(for: Self.today, history: stale, settings: settings).quota, 700)
        // 30 days of history: the 9 oldest (1000 each) are left out; today and later never count.
        var long = Self.history(Array(repeating: 1000, count: 9) + Array(repeating: 40, count: 21))
        long.append(.init(day: Self.today, issued: 5000))
        let window = QuotaPrediction.make(for: Self.today, history: long, settings: settings)
        XCTAssertEqual(window.predicted, 40)
        XCTAssertEqual(window.basis.first?.day, Self.today.adding(days: -21))
        XCTAssertEqual(window.basis.last?.day, Self.today.adding(days: -1))
    }

    func testThePredictionIsClampedAndTheFactorIsExact() {
        var settings = DailyQuotaSettings()
        // A falling line predicts below zero: the minimum, 10, times 1.25 = 12.5 → 13.
        let falling = QuotaPrediction.make(for: Self.today, history: Self.history((0..<14).map { 130 - 10 * $0 }), settings: settings)
        XCTAssertEqual(falling.predicted, 10)
        XCTAssertEqual(falling.quota, 13)
        let huge = QuotaPrediction.make(for: Self.today, history: Self.history(Array(repeating: 90_000, count: 14)), settings: settings)
        XCTAssertEqual(huge.predicted, 20_000)
        XCTAssertEqual(huge.quota, 25_000)
        // 10 × 1.1 is 11 exactly (in floating point it is 11.000000000000002, which would round up to 12).
        settings.factorPercent = 110
        XCTAssertEqual(QuotaPrediction.make(for: Self.today, history: Self.history(Array(repeating: 10, count: 14)), settings: settings).quota, 11)
        settings.factorPercent = 100
        settings.minimum = 5
        settings.maximum = 5
        XCTAssertEqual(QuotaPrediction.make(for: Self.today, history: Self.history(Array(repeating: 80, count: 14)), settings: settings).quota, 5)
    }

    func testTheDayIsTheAuthoritysDay() throws {
        let berlin = try XCTUnwrap(TimeZone(identifier: "Europe/Berlin"))
        // 22:59:30 UTC is 23:59:30 in Berlin in January: still the 15th; a minute later the 16th.
        let lateEvening = Date(timeIntervalSince1970: 1_800_000_000 + 53_970)
        XCTAssertEqual(QuotaDay(lateEvening, in: berlin).text, "2027-01-15")
        XCTAssertEqual(QuotaDay(lateEvening.addingTimeInterval(60), in: berlin).text, "2027-01-16")
        XCTAssertEqual(QuotaDay(text: "2027-01-15"), Self.today)
        XCTAssertEqual(Self.today.end(in: berlin), Date(timeIntervalSince1970: 1_800_000_000 + 54_000))
        // Summer time: midnight of 2027-07-01 in Berlin is 22:00 UTC the day before.
        let july = try XCTUnwrap(QuotaDay(text: "2027-06-30"))
        XCTAssertEqual(july.end(in: berlin).formatted(.iso8601), "2027-06-30T22:00:00Z")
    }

    // MARK: - Refusals on every issuing path

    func testAnOfficerIsRefusedWhenThePortalsQuotaIsUsedUpAndTheRefusalIsAudited() async throws {
        try await PortalHarness.run(configure: { $0.dailyQuota.fixed = 1; $0.teleTANMinimumInterval = .zero }) { portal in
            let officer = try await portal.signedIn(.officer)
            let first = try await officer.issueTeleTAN()
            XCTAssertNotNil(first)
            let refused = try await officer.pressIssue()
            XCTAssertEqual(refused.status, .tooManyRequests)
            XCTAssertTrue(refused.body.contains("Today&#39;s limit of teleTANs is reached"), refused.body)
            XCTAssertTrue(refused.body.contains("An administrator can raise the limit for today"))
            let rows = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
            XCTAssertEqual(rows, 1, "nothing was made")
            let entry = try await portal.auditActions("teletan.issue").last
            XCTAssertEqual(entry?.outcome, "refused")
            XCTAssertEqual(entry?.detailValues["reason"], "daily_quota")
            XCTAssertEqual(entry?.detailValues["quota"], "portal")
            officer.extraHeaders[.acceptLanguage] = "de"
            let german = try await officer.pressIssue()
            XCTAssertEqual(german.status, .tooManyRequests)
            XCTAssertTrue(german.body.contains("Das Tageslimit an teleTANs ist erreicht"), german.body)
            let used = try await portal.count("SELECT used AS n FROM daily_quotas WHERE scope = 'portal'")
            XCTAssertEqual(used, 1, "refusals take nothing")
            let metrics = try await portal.metrics()
            XCTAssertTrue(metrics.contains(#"portal_daily_quota_teletans{scope="portal"} 1"#), metrics)
            XCTAssertTrue(metrics.contains(#"portal_daily_quota_used_teletans{scope="portal"} 1"#), metrics)
        }
    }

    func testAHotlineAgentGetsTheCallPageBackWithEverythingTypedAndTicked() async throws {
        try await PortalHarness.run(configure: { $0.dailyQuota.fixed = 1 }) { portal in
            let officer = try await portal.signedIn(.officer)
            let first = try await officer.issueTeleTAN()
            XCTAssertNotNil(first)
            let agent = try await portal.signedIn(.hotline)
            let call = try await agent.startCall()
            let refused = try await agent.submitCall(call, action: "issue", checks: HotlineTests.allChecks, name: "Erika Beispiel")
            XCTAssertEqual(refused.status, .tooManyRequests)
            XCTAssertTrue(refused.body.contains("Today&#39;s limit of teleTANs is reached"), refused.body)
            XCTAssertTrue(refused.body.contains(#"value="Erika Beispiel""#), "what was typed is kept")
            for check in HotlineTests.allChecks {
                XCTAssertTrue(refused.body.contains(#"id="check-\#(check)" checked"#), "\(check) stays ticked")
            }
            XCTAssertNotNil(refused.hidden("nonce"), "the page can issue again once the quota is raised")
            let entry = try await portal.auditActions("teletan.issue").last
            XCTAssertEqual(entry?.detailValues["reason"], "daily_quota")
            XCTAssertFalse(entry?.details.contains("Erika") ?? true)
            let rows = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
            XCTAssertEqual(rows, 1)
        }
    }

    func testEventTeleTANsCountForThePortalAndTheirHealthAuthority() async throws {
        try await PortalHarness.run(configure: {
            $0.healthAuthorities = Self.authorities
            $0.dailyQuota.fixed = 1
            $0.teleTANMinimumInterval = .zero
        }) { portal in
            let event = try await portal.signedIn(.event)
            let issued = try await Self.issueEvent(event, authority: "1.01.0.01")
            XCTAssertEqual(issued.location, "/teletan/result")
            _ = try await event.get("/teletan/result")
            // The portal's quota is used up: Munich too is refused.
            let portalFull = try await Self.issueEvent(event, authority: "9.62.0.01")
            XCTAssertEqual(portalFull.status, .tooManyRequests)
            let portalRefusal = try await portal.auditActions("teletan.issue").last
            XCTAssertEqual(portalRefusal?.detailValues["quota"], "portal")
            // With room in the portal's quota, Flensburg's own quota (1) still refuses; Munich's does not.
            _ = try await DailyQuotas(settings: DailyQuotaSettings(), timeZone: portal.portal.configuration.timeZone, healthAuthorities: Self.authorities)
                .raise("portal", by: 5, reason: "test", raisedBy: "tt-admin", at: portal.clock.now, on: portal.db)
            let authorityFull = try await Self.issueEvent(event, authority: "1.01.0.01")
            XCTAssertEqual(authorityFull.status, .tooManyRequests)
            let authorityRefusal = try await portal.auditActions("teletan.issue").last
            XCTAssertEqual(authorityRefusal?.detailValues["quota"], "health_authority:1.01.0.01")
            let munich = try await Self.issueEvent(event, authority: "9.62.0.01")
            XCTAssertEqual(munich.location, "/teletan/result")
            let used = try await portal.count("SELECT used AS n FROM daily_quotas WHERE scope = 'portal'")
            XCTAssertEqual(used, 2)
        }
    }

    func testAnApprovedEventRequestStaysApprovedWhenTheQuotaRefusesIt() async throws {
        try await PortalHarness.run(configure: {
            $0.healthAuthorities = Self.authorities
            $0.eventApprovalByTwo = true
            $0.dailyQuota.fixed = 1
        }) { portal in
            let officer = try await portal.signedIn(.officer)
            let first = try await officer.issueTeleTAN()
            XCTAssertNotNil(first)
            let requester = try await portal.signedIn(.event)
            let approver = try await portal.session(username: "tt-event-2", roles: [.event])
            let id = try await EventAndRecentTests.requestEventTeleTAN(requester, authority: "9.62.0.01", reason: "AZ 2027-3", on: portal)
            let approverHome = try await approver.get("/")
            let approved = try await approver.post("/teletan/event/requests/\(id)/approve", ["csrf": approverHome.hidden("csrf") ?? ""])
            XCTAssertEqual(approved.location, "/?event=approved")
            let home = try await requester.get("/")
            let refused = try await requester.post("/teletan/event/requests/\(id)/issue", ["csrf": home.hidden("csrf") ?? "", "nonce": requester.nonce(portal)])
            XCTAssertEqual(refused.status, .tooManyRequests)
            XCTAssertTrue(refused.body.contains("an approved EVENT request can still be issued"))
            struct Row: Decodable { let status: String }
            let row = try await sql(portal.db).raw("SELECT status FROM event_requests").first(decoding: Row.self)
            XCTAssertEqual(row?.status, "approved")
            let refusal = try await portal.auditActions("teletan.issue").last
            XCTAssertEqual(refusal?.detailValues["reason"], "daily_quota")
        }
    }

    /// With a verification server, the unit is taken in the first transaction (with the form and
    /// the user's limits): a refused issuance never asks the server.
    func testTheRemotePathTakesTheQuotaBeforeAskingTheServer() async throws {
        try await LiveVerificationServer.run { server in
            let remote = RemoteVerificationService(baseURL: "http://127.0.0.1:\(server.port)", signer: server.signer)
            try await PortalHarness.run(configure: { $0.dailyQuota.fixed = 1; $0.teleTANMinimumInterval = .zero }, verification: remote) { portal in
                let officer = try await portal.signedIn(.officer)
                // The server's teleTANs (it serves this test's SQLite and PostgreSQL runs alike).
                struct Count: Decodable { let n: Int }
                let onServer = {
                    try await sql(server.app.database.database(logger: TestDatabases.testLogger))
                        .raw("SELECT COUNT(*) AS n FROM teletans").first(decoding: Count.self)?.n
                }
                let first = try await officer.issueTeleTAN()
                XCTAssertNotNil(first)
                let before = try await onServer()
                let refused = try await officer.pressIssue()
                XCTAssertEqual(refused.status, .tooManyRequests)
                let entry = try await portal.auditActions("teletan.issue").last
                XCTAssertEqual(entry?.detailValues["reason"], "daily_quota")
                let after = try await onServer()
                XCTAssertEqual(after, before, "the server was not asked")
            }
            await remote.shutdown()
        }
    }

    /// With a verification server that makes no teleTAN (here: nothing listens), the unit the
    /// first transaction took is given back: retries during an outage do not use up the day.
    func testTheRemotePathGivesTheUnitBackWhenTheServerMadeNoTeleTAN() async throws {
        try await LiveVerificationServer.run { server in
            // Port 9 (discard): nothing listens on it here, so the server is unreachable.
            let remote = RemoteVerificationService(baseURL: "http://127.0.0.1:9", signer: server.signer)
            try await PortalHarness.run(configure: { $0.dailyQuota.fixed = 1; $0.teleTANMinimumInterval = .zero }, verification: remote) { portal in
                let officer = try await portal.signedIn(.officer)
                let failed = try await officer.pressIssue()
                XCTAssertEqual(failed.status, .serviceUnavailable)
                let again = try await officer.pressIssue()
                XCTAssertEqual(again.status, .serviceUnavailable, "not 429: the quota of 1 was not used up by the first failure")
                struct Used: Decodable { let used: Int }
                let used = try await sql(portal.db).raw("SELECT used FROM daily_quotas WHERE scope = 'portal'").all(decoding: Used.self)
                XCTAssertEqual(used.map(\.used), [0])
            }
            await remote.shutdown()
        }
    }

    // MARK: - The administrator's raise

    func testAnAdminRaisesTodaysQuotaAuditedUntilTheAuthoritysMidnight() async throws {
        try await PortalHarness.run(configure: { $0.dailyQuota.fixed = 1; $0.teleTANMinimumInterval = .zero }) { portal in
            let officer = try await portal.signedIn(.officer)
            let first = try await officer.issueTeleTAN()
            XCTAssertNotNil(first)
            let admin = try await portal.signedIn(.admin)
            let page = try await admin.get("/admin/quota")
            XCTAssertEqual(page.status, .ok)
            for label in ["Additional teleTANs today", "Reason", "Raise quota", "Today&#39;s quota", "Fixed quota (fewer than 14 days of history)"] {
                XCTAssertTrue(page.body.contains(label), label)
            }
            XCTAssertTrue(page.body.contains(#"<td class="left">0</td>"#), page.body)
            let raised = try await admin.post("/admin/quota", ["csrf": page.hidden("csrf") ?? "", "scope": "portal", "amount": "2", "reason": "Ausbruch Schule Nord"])
            XCTAssertEqual(raised.location, "/admin/quota?result=raised")
            let after = try await admin.get("/admin/quota?result=raised")
            XCTAssertTrue(after.body.contains("The quota has been raised until midnight."))
            XCTAssertTrue(after.body.contains(#"<td class="limit">3</td>"#), after.body)
            XCTAssertTrue(after.body.contains(#"<td class="left">2</td>"#))
            XCTAssertTrue(after.body.contains("Ausbruch Schule Nord"), "the reason is shown with the raise")
            let raises = try await portal.auditActions("admin.quota.raise")
            let entry = try XCTUnwrap(raises.last)
            XCTAssertEqual(entry.actor, "tt-admin")
            XCTAssertEqual(entry.subject, "quota:portal")
            XCTAssertEqual(entry.detailValues["amount"], "2")
            XCTAssertEqual(entry.detailValues["limit"], "3")
            XCTAssertFalse(entry.details.contains("Ausbruch"), "the free-text reason stays out of the trail")
            let second = try await officer.issueTeleTAN()
            XCTAssertNotNil(second)
            let third = try await officer.issueTeleTAN()
            XCTAssertNotNil(third)
            let fourth = try await officer.pressIssue()
            XCTAssertEqual(fourth.status, .tooManyRequests)
            // 23:59:30 in Berlin (22:59:30 UTC): still today; a minute later the raise is gone.
            // (New sessions: the others have been idle for hours.)
            portal.clock.advance(seconds: 53_970)
            let lateOfficer = try await portal.signedIn(.officer)
            let lateAdmin = try await portal.signedIn(.admin)
            let lastMinute = try await lateOfficer.pressIssue()
            XCTAssertEqual(lastMinute.status, .tooManyRequests)
            portal.clock.advance(seconds: 60)
            let tomorrow = try await lateAdmin.get("/admin/quota")
            XCTAssertTrue(tomorrow.body.contains(#"<td class="limit">1</td>"#), tomorrow.body)
            XCTAssertTrue(tomorrow.body.contains(#"<td class="extra">0</td>"#))
            XCTAssertTrue(tomorrow.body.contains("No quota has been raised today."))
            let next = try await lateOfficer.issueTeleTAN()
            XCTAssertNotNil(next, "a new day, a new quota")
            // The free-text reason is shown for its day only, and kept no longer: the next
            // cleanup after midnight deletes yesterday's raises (the audit entry keeps the number).
            let raisesBefore = try await portal.count("SELECT count(*) AS n FROM daily_quota_raises")
            XCTAssertEqual(raisesBefore, 1)
            try await portal.portal.runCleanup()
            let raisesAfter = try await portal.count("SELECT count(*) AS n FROM daily_quota_raises")
            XCTAssertEqual(raisesAfter, 0)
            let daysKept = try await portal.count("SELECT count(*) AS n FROM daily_quotas WHERE extra = 2")
            XCTAssertEqual(daysKept, 1, "the day's figures stay")
        }
    }

    func testBadRaisesAreALocalised400KeepingWhatWasTyped() async throws {
        try await PortalHarness.run(configure: { $0.healthAuthorities = Self.authorities }) { portal in
            let admin = try await portal.signedIn(.admin)
            let page = try await admin.get("/admin/quota")
            let csrf = page.hidden("csrf") ?? ""
            let cases: [([String: String], String)] = [
                (["scope": "portal", "amount": "viele", "reason": "Ausbruch"], "whole number from 1 to 100000"),
                (["scope": "portal", "amount": "-3", "reason": "Ausbruch"], "whole number from 1 to 100000"),
                (["scope": "portal", "amount": "100001", "reason": "Ausbruch"], "whole number from 1 to 100000"),
                (["scope": "portal", "amount": "99999999999999999999", "reason": "Ausbruch"], "whole number from 1 to 100000"),
                (["scope": "portal", "amount": "5"], "Please give a reason"),
                (["scope": "portal", "amount": "5", "reason": String(repeating: "x", count: 81)], "at most 80 characters"),
                (["scope": "portal", "amount": "5", "reason": "a\u{7}b"], "control character"),
                (["scope": "health_authority:0.00.0.00", "amount": "5", "reason": "Ausbruch"], "choose a quota from the list"),
            ]
            for (form, message) in cases {
                let refused = try await admin.post("/admin/quota", form.merging(["csrf": csrf]) { own, _ in own })
                XCTAssertEqual(refused.status, .badRequest, "\(form)")
                XCTAssertTrue(refused.body.contains(message), "\(form): \(refused.body)")
                if let amount = form["amount"], amount.count < 10 { XCTAssertTrue(refused.body.contains(#"value="\#(amount)""#), "\(form)") }
                if let reason = form["reason"], reason == "Ausbruch" { XCTAssertTrue(refused.body.contains(#"value="Ausbruch""#), "\(form)") }
            }
            admin.extraHeaders[.acceptLanguage] = "de"
            let german = try await admin.post("/admin/quota", ["csrf": csrf, "scope": "portal", "amount": "x", "reason": "Ausbruch"])
            XCTAssertEqual(german.status, .badRequest)
            XCTAssertTrue(german.body.contains("ganze Zahl von 1 bis 100000"), german.body)
            let noCSRF = try await admin.post("/admin/quota", ["scope": "portal", "amount": "5", "reason": "Ausbruch"])
            XCTAssertEqual(noCSRF.status, .forbidden)
            let extra = try await portal.count("SELECT SUM(extra) AS n FROM daily_quotas")
            XCTAssertEqual(extra, 0, "nothing was raised")
            let raiseEntries = try await portal.auditActions("admin.quota.raise")
            XCTAssertEqual(raiseEntries.count, 0)
            // A health authority's quota is raised on its own.
            let raised = try await admin.post("/admin/quota", ["csrf": csrf, "scope": "health_authority:9.62.0.01", "amount": "7", "reason": "Messe"])
            XCTAssertEqual(raised.location, "/admin/quota?result=raised")
            let munich = try await portal.count("SELECT extra AS n FROM daily_quotas WHERE scope = 'health_authority:9.62.0.01'")
            XCTAssertEqual(munich, 7)
            let officer = try await portal.signedIn(.officer)
            let forbidden = try await officer.get("/admin/quota")
            XCTAssertEqual(forbidden.status, .forbidden)
        }
    }

    // MARK: - Several instances

    func testTwoIssuancesAtTheLastUnitOnlyOneSucceeds() async throws {
        try await PortalHarness.run(configure: { $0.dailyQuota.fixed = 1; $0.teleTANMinimumInterval = .zero }) { portal in
            let one = try await portal.signedIn(.officer)
            let two = try await portal.session(username: "tt-officer-2", roles: [.officer])
            let homes = (try await one.get("/"), try await two.get("/"))
            async let first = one.post("/teletan", ["csrf": homes.0.hidden("csrf") ?? "", "nonce": homes.0.hidden("nonce") ?? ""])
            async let second = two.post("/teletan", ["csrf": homes.1.hidden("csrf") ?? "", "nonce": homes.1.hidden("nonce") ?? ""])
            let statuses = [try await first.status, try await second.status]
            XCTAssertEqual(statuses.filter { $0 == .seeOther }.count, 1, "\(statuses)")
            XCTAssertEqual(statuses.filter { $0 == .tooManyRequests }.count, 1, "\(statuses)")
            let rows = try await portal.count("SELECT COUNT(*) AS n FROM teletans")
            XCTAssertEqual(rows, 1)
            let used = try await portal.count("SELECT used AS n FROM daily_quotas WHERE scope = 'portal'")
            XCTAssertEqual(used, 1)
        }
    }

    func testThePeriodicWorkPredictsEachScopesDayOnce() async throws {
        try await PortalHarness.run(configure: { $0.healthAuthorities = Self.authorities; $0.dailyQuota.fixed = 500 }) { portal in
            // Fourteen complete days of the portal's history, rising by 10 a day from 100.
            for (offset, used) in (0..<14).map({ 100 + 10 * $0 }).enumerated() {
                let day = Self.today.adding(days: offset - 14).text
                try await sql(portal.db).raw("""
                    INSERT INTO daily_quotas (scope, day, quota, predicted, basis, extra, used)
                    VALUES ('portal', \(bind: day), 1000, NULL, '[]', 0, \(bind: used))
                    """).run()
            }
            try await portal.portal.runCleanup()
            struct Row: Decodable { let scope: String; let quota: Int; let predicted: Int? }
            let rows = try await sql(portal.db).raw("SELECT scope, quota, predicted FROM daily_quotas WHERE day = '2027-01-15' ORDER BY scope")
                .all(decoding: Row.self)
            XCTAssertEqual(rows.map(\.scope), ["health_authority:1.01.0.01", "health_authority:9.62.0.01", "portal"])
            XCTAssertEqual(rows.map(\.quota), [500, 500, 300], "the authorities have no history yet: the fixed quota")
            XCTAssertEqual(rows.last?.predicted, 240)
            // Another run (another instance, a minute later) predicts nothing again.
            try await sql(portal.db).raw("UPDATE daily_quotas SET used = 0 WHERE day < '2027-01-15'").run()
            portal.clock.advance(seconds: 60)
            try await portal.portal.runCleanup()
            let again = try await portal.count("SELECT quota AS n FROM daily_quotas WHERE scope = 'portal' AND day = '2027-01-15'")
            XCTAssertEqual(again, 300)
            let admin = try await portal.signedIn(.admin)
            let page = try await admin.get("/admin/quota")
            XCTAssertTrue(page.body.contains("Prediction from 14 days: 240 teleTANs"), page.body)
            XCTAssertTrue(page.body.contains("<li>2027-01-01: 100</li>"), "the days it was predicted from, as they were that night")
            XCTAssertTrue(page.body.contains("Gesundheitsamt München, Stadt"))
        }
    }

    static func issueEvent(_ browser: Browser, authority: String) async throws -> Browser.Page {
        let home = try await browser.get("/")
        return try await browser.post("/teletan/event", ["csrf": home.hidden("csrf") ?? "", "nonce": home.hidden("nonce") ?? "", "authority": authority])
    }
}
