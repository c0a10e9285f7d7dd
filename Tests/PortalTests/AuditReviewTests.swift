import AccessControl
import Audit
import FluentKit
import Foundation
import HTTPTypes
import Logging
import SQLKit
import Storage
import Synchronization
import TeleTAN
import TestSupport
import Verification
import XCTest
@testable import AuditReview
@testable import Portal
@testable import PortalWeb

/// The admins' audit review: search and keyset paging, one entry, the teleTAN lookup, exports,
/// charts, the chain check on the page, sessions and lockouts; and that viewing is audited.
final class AuditReviewTests: XCTestCase {
    /// Appends an entry as some feature would, at the test clock's time.
    static func append(
        _ portal: TestPortal, action: String, outcome: AuditEvent.Outcome = .success, actor: String? = nil,
        address: String? = nil, subject: String? = nil, details: [String: String] = [:]
    ) async throws -> Int64 {
        try await portal.portal.foundation.audit.append(AuditEvent(
            action: AuditAction(rawValue: action), outcome: outcome, actor: actor, role: actor == nil ? nil : "officer",
            address: address, subject: subject, details: details), at: portal.clock.now, on: portal.db)
    }

    /// The sequence numbers of the result rows, in page order.
    static func seqs(_ page: Browser.Page) -> [Int64] {
        page.body.matches(of: /<tr id="entry-(\d+)"/).compactMap { Int64($0.output.1) }
    }

    /// The query-string link of an element, with `&amp;` decoded.
    static func link(_ page: Browser.Page, id: String) -> String? {
        page.body.firstMatch(of: try! Regex("href=\"([^\"]*)\" id=\"\(id)\"")).map {
            String($0.output[1].substring ?? "").replacingOccurrences(of: "&amp;", with: "&")
        }
    }

    func testEveryFilterAloneAndCombined() async throws {
        try await PortalHarness.run { portal in
            let start = portal.clock.now
            var seqs: [String: Int64] = [:]
            seqs["a1"] = try await Self.append(portal, action: "signin", actor: "alice", address: "192.0.2.1")
            seqs["a2"] = try await Self.append(portal, action: "teletan.issue", actor: "alice", address: "192.0.2.1", subject: "fp-1")
            portal.clock.advance(seconds: 86400 * 2)
            seqs["b1"] = try await Self.append(portal, action: "teletan.issue", outcome: .refused, actor: "bob", address: "192.0.2.2")
            seqs["b2"] = try await Self.append(portal, action: "signin", outcome: .failure, actor: "bob", address: "192.0.2.1")
            seqs["c1"] = try await Self.append(portal, action: "teletan.revoke", actor: "carol", address: "192.0.2.3", subject: "fp-1")
            let admin = try await portal.signedIn(.admin)
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "Europe/Berlin")!
            let firstDay = String(format: "%04d-%02d-%02d", calendar.component(.year, from: start), calendar.component(.month, from: start),
                                  calendar.component(.day, from: start))
            let cases: [(String, Set<String>)] = [
                ("actor=alice", ["a1", "a2"]),
                ("action=teletan.issue", ["a2", "b1"]),
                ("outcome=refused", ["b1"]),
                ("outcome=failure", ["b2"]),
                ("address=192.0.2.1", ["a1", "a2", "b2"]),
                ("subject=fp-1", ["a2", "c1"]),
                ("from=\(firstDay)&to=\(firstDay)", ["a1", "a2"]),
                ("to=\(firstDay)", ["a1", "a2"]),
                ("actor=bob&address=192.0.2.1", ["b2"]),
                ("action=teletan.issue&actor=alice&subject=fp-1&address=192.0.2.1&outcome=success", ["a2"]),
                ("action=signin&from=\(firstDay)&to=\(firstDay)", ["a1"]),
                ("actor=nobody", []),
            ]
            for (query, expected) in cases {
                let page = try await admin.get("/admin/audit?\(query)")
                XCTAssertEqual(page.status, .ok, query)
                let shown = Set(Self.seqs(page))
                XCTAssertEqual(shown, Set(expected.map { seqs[$0]! }), query)
                // The export links carry the same filter.
                XCTAssertTrue(page.body.contains("/admin/audit/export.csv?"), query)
            }
            // Unfiltered: newest first (the admin's own page views are left out unless asked for).
            let all = try await admin.get("/admin/audit")
            let order = Self.seqs(all)
            XCTAssertEqual(order, order.sorted(by: >))
            XCTAssertTrue(Set(seqs.values).isSubset(of: Set(order)))
            // As a browser's GET form sends a space (+), and a plus sign (%2B).
            let spaced = try await Self.append(portal, action: "signin", actor: "dr a+b")
            let form = try await admin.get("/admin/audit?actor=dr+a%2Bb")
            XCTAssertEqual(Self.seqs(form), [spaced])
            XCTAssertTrue(form.body.contains("value=\"dr a+b\""))
            // A from/to given with a time of day: minute precision.
            let minute = try await admin.get("/admin/audit?from=\(firstDay)T00:00&to=\(firstDay)T23:59&actor=alice")
            XCTAssertEqual(Set(Self.seqs(minute)), [seqs["a1"]!, seqs["a2"]!])
        }
    }

    /// The time range is found through `seq` bounds; entries written out of time order (another
    /// instance's clock a little behind) at the range's edges are still in or out by their time.
    func testATimeRangeFindsEntriesWrittenOutOfTimeOrder() async throws {
        try await PortalHarness.run { portal in
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "Europe/Berlin")!
            let day = calendar.date(byAdding: .day, value: 3, to: calendar.startOfDay(for: portal.clock.now))!
            portal.clock.advance(seconds: day.timeIntervalSince(portal.clock.now) - 60)
            let beforeDay = try await Self.append(portal, action: "range.test", actor: "early")   // 23:59 the day before
            portal.clock.advance(seconds: 120)
            let inDay = try await Self.append(portal, action: "range.test", actor: "first")       // 00:01
            portal.clock.advance(seconds: -90)
            let lateClock = try await Self.append(portal, action: "range.test", actor: "behind")  // 23:59:30, written later
            portal.clock.advance(seconds: 2 * 86400)
            let nextDay = try await Self.append(portal, action: "range.test", actor: "next")
            let admin = try await portal.signedIn(.admin)
            let text = String(format: "%04d-%02d-%02d", calendar.component(.year, from: day), calendar.component(.month, from: day),
                              calendar.component(.day, from: day))
            let page = try await admin.get("/admin/audit?from=\(text)&to=\(text)")
            XCTAssertEqual(Self.seqs(page), [inDay])
            let before = try await admin.get("/admin/audit?to=\(text)&action=range.test")
            XCTAssertEqual(Self.seqs(before), [lateClock, inDay, beforeDay])
            let fromDay = try await admin.get("/admin/audit?from=\(text)&action=range.test")
            XCTAssertEqual(Self.seqs(fromDay), [nextDay, inDay])
            let empty = try await admin.get("/admin/audit?from=1999-01-01&to=1999-01-02")
            XCTAssertEqual(Self.seqs(empty), [])
        }
    }

    func testAnUnreadableFilterIsA400WithWhatWasTypedKept() async throws {
        try await PortalHarness.run { portal in
            let admin = try await portal.signedIn(.admin)
            let page = try await admin.get("/admin/audit?actor=alice&from=2026-13-01&to=yesterday&outcome=maybe")
            XCTAssertEqual(page.status, .badRequest)
            XCTAssertTrue(page.body.contains("id=\"filter-error\""))
            XCTAssertTrue(page.body.contains("value=\"alice\""))
            XCTAssertTrue(page.body.contains("value=\"2026-13-01\""))
            XCTAssertTrue(page.body.contains("value=\"yesterday\""))
            XCTAssertTrue(page.body.contains("From, To, Outcome") || page.body.contains("Outcome, From, To"), page.body)
            let reversed = try await admin.get("/admin/audit?from=2026-11-24&to=2026-11-23")
            XCTAssertEqual(reversed.status, .badRequest)
            let badCursor = try await admin.get("/admin/audit?before=abc")
            XCTAssertEqual(badCursor.status, .badRequest)
            let german = try await admin.get("/admin/audit?from=x", headers: [.acceptLanguage: "de"])
            XCTAssertEqual(german.status, .badRequest)
            XCTAssertTrue(german.body.contains("Nach diesen Feldern kann so nicht gesucht werden: Von"), german.body)
        }
    }

    /// Keyset paging: entries written while the admin pages neither shift the pages nor repeat.
    func testPagingForwardAndBackAcrossInsertsLosesAndDoublesNothing() async throws {
        try await PortalHarness.run { portal in
            var written: [Int64] = []
            for index in 0..<120 {
                written.append(try await Self.append(portal, action: "signin", actor: "paging-\(index % 3)"))
            }
            let admin = try await portal.signedIn(.admin)
            let first = try await admin.get("/admin/audit?action=signin")
            XCTAssertEqual(Self.seqs(first), Array(written.suffix(50).reversed()))
            XCTAssertNil(Self.link(first, id: "page-newer"))
            // Meanwhile, more entries arrive.
            var later: [Int64] = []
            for _ in 0..<7 { later.append(try await Self.append(portal, action: "signin", actor: "paging-new")) }
            let olderLink = try XCTUnwrap(Self.link(first, id: "page-older"))
            let second = try await admin.get(olderLink)
            XCTAssertEqual(Self.seqs(second), Array(written.dropLast(50).suffix(50).reversed()))
            let third = try await admin.get(try XCTUnwrap(Self.link(second, id: "page-older")))
            XCTAssertEqual(Self.seqs(third), Array(written.prefix(20).reversed()))
            XCTAssertNil(Self.link(third, id: "page-older"), "the oldest page has no older link")
            // Back: newer pages, then the new entries on the first.
            let backToSecond = try await admin.get(try XCTUnwrap(Self.link(third, id: "page-newer")))
            XCTAssertEqual(Self.seqs(backToSecond), Self.seqs(second))
            let backToFirst = try await admin.get(try XCTUnwrap(Self.link(backToSecond, id: "page-newer")))
            XCTAssertEqual(Self.seqs(backToFirst), Array(written.suffix(50).reversed()))
            let newest = try await admin.get(try XCTUnwrap(Self.link(backToFirst, id: "page-newer")))
            XCTAssertEqual(Self.seqs(newest), Array(later.reversed()))
            XCTAssertNil(Self.link(newest, id: "page-newer"))
            let seen = Self.seqs(newest) + Self.seqs(backToFirst) + Self.seqs(second) + Self.seqs(third)
            XCTAssertEqual(seen.count, Set(seen).count)
            XCTAssertEqual(Set(seen), Set(written + later))
        }
    }

    func testEntryPageShowsEveryFieldTheHashesAndRelatedLinks() async throws {
        try await PortalHarness.run { portal in
            let seq = try await Self.append(portal, action: "teletan.issue", actor: "alice", address: "192.0.2.9",
                                            subject: String(repeating: "ab", count: 32), details: ["type": "TEST"])
            let admin = try await portal.signedIn(.admin)
            let page = try await admin.get("/admin/audit/entries/\(seq)")
            XCTAssertEqual(page.status, .ok)
            let stored = try await portal.portal.auditReview.audit.search.entry(seq, on: portal.db)
            let row = try XCTUnwrap(stored)
            for text in ["alice", "teletan.issue", "192.0.2.9", row.hash, row.prev_hash, String(repeating: "ab", count: 32), "TEST"] {
                XCTAssertTrue(page.body.contains(text), text)
            }
            XCTAssertEqual(Self.link(page, id: "same-actor"), "/admin/audit?actor=alice")
            XCTAssertEqual(Self.link(page, id: "same-subject"), "/admin/audit?subject=\(String(repeating: "ab", count: 32))")
            XCTAssertEqual(Self.link(page, id: "teletan-status"), "/admin/audit/teletans/\(String(repeating: "ab", count: 32))")
            let missing = try await admin.get("/admin/audit/entries/999999")
            XCTAssertEqual(missing.status, .notFound)
            let nonsense = try await admin.get("/admin/audit/entries/abc")
            XCTAssertEqual(nonsense.status, .notFound)
        }
    }

    func testLookUpAnIssuedARedeemedAndAnUnknownTeleTAN() async throws {
        try await PortalHarness.run { portal in
            let officer = try await portal.signedIn(.officer)
            let issued = try await officer.issueTeleTAN()
            let teleTAN = try XCTUnwrap(issued)
            portal.clock.advance(seconds: 31)
            let redeemedIssued = try await officer.issueTeleTAN()
            let redeemed = try XCTUnwrap(redeemedIssued)
            try await CreateLifecycleRecords().prepare(on: portal.db)
            let lifecycle = TeleTANLifecycle(hasher: portal.portal.foundation.hasher, now: portal.clock.function)
            _ = try await lifecycle.registrationToken(for: redeemed, on: portal.db)

            let admin = try await portal.signedIn(.admin)
            func lookUp(_ typed: String) async throws -> Browser.Page {
                let search = try await admin.get("/admin/audit")
                return try await admin.post("/admin/audit/lookup", ["csrf": search.hidden("csrf") ?? "", "teletan": typed])
            }
            // Spaces and lower case, as read over the phone.
            let spaced = teleTAN.lowercased().enumerated().map { $0.offset % 3 == 2 ? "\($0.element) " : "\($0.element)" }.joined()
            let answer = try await lookUp(" " + spaced)
            XCTAssertEqual(answer.status, .seeOther)
            let fingerprint = portal.portal.foundation.hasher.hash(teleTAN, for: .teleTANFingerprint)
            XCTAssertEqual(answer.location, "/admin/audit/teletans/\(fingerprint)")
            let page = try await admin.get(try XCTUnwrap(answer.location))
            XCTAssertEqual(page.status, .ok)
            XCTAssertTrue(page.body.contains("id=\"teletan-issued-by\">tt-officer<"), page.body)
            XCTAssertTrue(page.body.contains("not used yet"), page.body)
            XCTAssertTrue(page.body.contains("id=\"teletan-type\">TEST<"))
            HotlineTests.assertNoTeleTAN(page, teleTAN)

            let redeemedAnswer = try await lookUp(redeemed)
            let redeemedPage = try await admin.get(try XCTUnwrap(redeemedAnswer.location))
            XCTAssertTrue(redeemedPage.body.contains("status-redeemed"), redeemedPage.body)

            var unknown = TeleTAN.random()
            while unknown.value == teleTAN || unknown.value == redeemed { unknown = TeleTAN.random() }
            let unknownAnswer = try await lookUp(unknown.value)
            let unknownPage = try await admin.get(try XCTUnwrap(unknownAnswer.location))
            XCTAssertEqual(unknownPage.status, .ok)
            XCTAssertTrue(unknownPage.body.contains("id=\"teletan-not-found\""))

            // Not a teleTAN: a clear 422, and what was typed is not echoed (it may be one misread).
            let wrong = try await lookUp(String(teleTAN.dropLast()) + (teleTAN.last == "A" ? "B" : "A"))
            XCTAssertEqual(wrong.status, .unprocessableContent)
            XCTAssertTrue(wrong.body.contains("id=\"lookup-error\""))
            XCTAssertFalse(wrong.body.contains(String(teleTAN.dropLast())))

            // Every lookup is audited by fingerprint; the teleTAN itself is nowhere in the trail.
            let lookups = try await portal.auditActions("audit.lookup")
            XCTAssertEqual(lookups.map(\.outcome), ["success", "success", "success", "failure"])
            XCTAssertEqual(lookups.first?.subject, fingerprint)
            XCTAssertEqual(lookups.first?.actor, "tt-admin")
            let everything = try await Self.allRows(portal)
            for row in everything {
                for text in [row.details, row.subject ?? "", row.actor ?? ""] {
                    XCTAssertFalse(text.uppercased().contains(teleTAN), "teleTAN in audit entry \(row.seq)")
                }
            }
            XCTAssertFalse(admin.requested.contains { $0.uppercased().contains(teleTAN) }, "teleTAN in a URL")
        }
    }

    /// Every lookup and view adds an entry about the teleTAN; its issuance must still be found.
    func testTheIssuanceIsFoundAfterManyLookups() async throws {
        try await PortalHarness.run { portal in
            let officer = try await portal.signedIn(.officer)
            let issued = try await officer.issueTeleTAN()
            let teleTAN = try XCTUnwrap(issued)
            let admin = try await portal.signedIn(.admin)
            let search = try await admin.get("/admin/audit")
            var page: Browser.Page?
            for _ in 0..<30 {
                let answer = try await admin.post("/admin/audit/lookup", ["csrf": search.hidden("csrf") ?? "", "teletan": teleTAN])
                page = try await admin.get(try XCTUnwrap(answer.location))
            }
            let last = try XCTUnwrap(page)
            XCTAssertFalse(last.body.contains("id=\"teletan-not-found\""))
            XCTAssertTrue(last.body.contains("id=\"teletan-issued-by\">tt-officer<"))
            XCTAssertTrue(last.body.contains("id=\"teletan-type\">TEST<"))
        }
    }

    /// A teleTAN as a person might type it into a search field: grouped 3-3-4 and lower-cased.
    static func groupedLowerCase(_ teleTAN: String) -> String {
        "\(teleTAN.prefix(3)) \(teleTAN.dropFirst(3).prefix(3)) \(teleTAN.suffix(4))".lowercased()
    }

    /// A teleTAN typed into a search field (instead of the lookup) is neither searched for, shown
    /// again, nor written into the audit trail.
    func testATeleTANTypedIntoTheSearchIsRefusedAndNotKept() async throws {
        try await PortalHarness.run { portal in
            let teleTAN = TeleTAN.random().value
            let admin = try await portal.signedIn(.admin)
            let spaced = Self.groupedLowerCase(teleTAN)
            for query in ["subject=\(teleTAN)", "action=\(teleTAN)&actor=alice", "address=\(Browser.encode(spaced))"] {
                let page = try await admin.get("/admin/audit?\(query)")
                XCTAssertEqual(page.status, .badRequest, query)
                XCTAssertTrue(page.body.contains("id=\"filter-error\""), query)
                HotlineTests.assertNoTeleTAN(page, teleTAN)
                let export = try await admin.get("/admin/audit/export.csv?\(query)")
                XCTAssertEqual(export.status, .badRequest, query)
            }
            let views = try await portal.auditActions("audit.view")
            XCTAssertEqual(views.count, 3)
            XCTAssertEqual(views.map { $0.detailValues["teletan_typed_in"] }, ["subject", "action", "address"])
            XCTAssertEqual(views[1].detailValues["filter"], "actor=alice")
            for row in try await Self.allRows(portal) {
                XCTAssertFalse((row.details + (row.subject ?? "")).uppercased().contains(teleTAN), "teleTAN in entry \(row.seq)")
            }
        }
    }

    /// Issue 18, item 3: an issued teleTAN typed into Actor (where a username may look like a
    /// teleTAN) is treated like one in any other field: not searched for, not shown again, not in
    /// the trail or any export; only the field's name and the teleTAN's fingerprint are recorded.
    func testAnIssuedTeleTANTypedIntoActorNeverReachesTheTrail() async throws {
        try await PortalHarness.run { portal in
            let officer = try await portal.signedIn(.officer)
            let issued = try await officer.issueTeleTAN()
            let teleTAN = try XCTUnwrap(issued)
            let fingerprint = portal.portal.foundation.hasher.hash(teleTAN, for: .teleTANFingerprint)
            let admin = try await portal.signedIn(.admin)
            let spaced = Self.groupedLowerCase(teleTAN)
            for query in ["actor=\(teleTAN)", "actor=\(Browser.encode(spaced))", "actor=\(teleTAN)&action=teletan"] {
                let page = try await admin.get("/admin/audit?\(query)")
                XCTAssertEqual(page.status, .badRequest, query)
                XCTAssertTrue(page.body.contains("id=\"filter-error\""), query)
                HotlineTests.assertNoTeleTAN(page, teleTAN)
                for format in ["csv", "jsonl"] {
                    let export = try await admin.get("/admin/audit/export.\(format)?\(query)")
                    XCTAssertEqual(export.status, .badRequest, query)
                }
            }
            let views = try await portal.auditActions("audit.view").filter { $0.detailValues["page"] == "search" }
            XCTAssertEqual(views.map { $0.detailValues["teletan_typed_in"] }, ["actor", "actor", "actor"])
            XCTAssertEqual(views.map(\.subject), [fingerprint, fingerprint, fingerprint])
            XCTAssertEqual(views.last?.detailValues["filter"], "action=teletan")
            // Nowhere in the trail, nor in the exports of all of it.
            for row in try await Self.allRows(portal) {
                XCTAssertFalse(
                    [row.details, row.subject ?? "", row.actor ?? ""].contains { $0.uppercased().contains(teleTAN) }, "teleTAN in entry \(row.seq)")
            }
            for format in ["csv", "jsonl"] {
                let export = try await admin.get("/admin/audit/export.\(format)")
                XCTAssertEqual(export.status, .ok)
                XCTAssertFalse(export.body.uppercased().contains(teleTAN), format)
            }
            // The teleTAN's page lists the searches it was typed into.
            let teleTANPage = try await admin.get("/admin/audit/teletans/\(fingerprint)")
            XCTAssertTrue(teleTANPage.body.contains("page=search"), teleTANPage.body)
        }
    }

    /// A username that has a teleTAN's form but was never issued is an ordinary Actor: searched
    /// for and recorded as typed.
    func testATeleTANShapedUsernameNeverIssuedIsSearchedAndRecorded() async throws {
        try await PortalHarness.run { portal in
            let username = TeleTAN.random().value.lowercased()
            let seq = try await Self.append(portal, action: "signin", actor: username)
            let admin = try await portal.signedIn(.admin)
            let page = try await admin.get("/admin/audit?actor=\(username)")
            XCTAssertEqual(page.status, .ok)
            XCTAssertEqual(Self.seqs(page), [seq])
            XCTAssertTrue(page.body.contains("value=\"\(username)\""))
            let views = try await portal.auditActions("audit.view")
            XCTAssertEqual(views.last?.detailValues["filter"], "actor=\(username)")
            XCTAssertNil(views.last?.detailValues["teletan_typed_in"])
            let export = try await admin.get("/admin/audit/export.csv?actor=\(username)")
            XCTAssertEqual(export.status, .ok)
        }
    }

    /// Issue 18, item 11: Actor without regard to case, Action by prefix, a subject as the table
    /// shortens it, a call id with or without `call:`, and the admin's own page views left out
    /// unless asked for; paging through an action prefix loses and doubles nothing.
    func testSearchAsAnInvestigatorTypes() async throws {
        try await PortalHarness.run { portal in
            let call = UUID().uuidString.lowercased()
            let alice = try await Self.append(portal, action: "signin", actor: "alice")
            let started = try await Self.append(portal, action: "hotline.call.started", actor: "agent", subject: "call:\(call)")
            let queued = try await Self.append(portal, action: "hotline.callback.queued", actor: "agent", subject: "callback:x")
            let ended = try await Self.append(portal, action: "hotline.call.ended", actor: "agent", subject: "call:\(call)")
            _ = try await Self.append(portal, action: "teletan.issue", actor: "bob", subject: "call-not-this")
            let admin = try await portal.signedIn(.admin)
            let short = "call:\(call.prefix(7))…"
            let cases: [(String, [Int64])] = [
                ("actor=ALICE", [alice]),
                ("actor=Alice", [alice]),
                ("action=hotline", [ended, queued, started]),
                ("action=hotline.call.", [ended, started]),
                ("action=HOTLINE.CALL.ENDED", [ended]),
                ("action=nothing.like.this", []),
                ("subject=\(Browser.encode(short))", [ended, started]),
                ("subject=\(call.prefix(12))...", []),
                ("subject=\(call)", [ended, started]),
                ("subject=\(call.uppercased())", [ended, started]),
                ("subject=call:\(call)", [ended, started]),
                ("subject=call:\(call)&action=hotline&actor=AGENT", [ended, started]),
            ]
            for (query, expected) in cases {
                let page = try await admin.get("/admin/audit?\(query)")
                XCTAssertEqual(page.status, .ok, query)
                XCTAssertEqual(Self.seqs(page), expected, query)
            }
            // The shortened subject is kept in the form as typed.
            let typed = try await admin.get("/admin/audit?subject=\(Browser.encode(short))")
            XCTAssertTrue(typed.body.contains("value=\"\(short)\""))

            // Own page views: hidden by default, shown with the box ticked; another admin's are shown.
            let other = try await portal.session(username: "other-admin", roles: [.admin])
            _ = try await other.get("/admin/audit/charts")
            let otherView = try await portal.auditActions("audit.view").last!
            let plain = try await admin.get("/admin/audit")
            let allViews = try await portal.auditActions("audit.view")
            let ownViews = Set(allViews.filter { $0.actor == "tt-admin" }.compactMap(\.id))
            XCTAssertTrue(Set(Self.seqs(plain)).isDisjoint(with: ownViews))
            XCTAssertTrue(Self.seqs(plain).contains(try XCTUnwrap(otherView.id)))
            XCTAssertTrue(plain.body.contains("id=\"f-own-views\""))
            let shown = try await admin.get("/admin/audit?own_views=show")
            XCTAssertFalse(Set(Self.seqs(shown)).isDisjoint(with: ownViews))
            XCTAssertTrue(shown.body.contains("checked"))
            let wrongToggle = try await admin.get("/admin/audit?own_views=yes")
            XCTAssertEqual(wrongToggle.status, .badRequest)

            // Paging through a prefix that stands for two actions.
            var written: [Int64] = []
            for index in 0..<120 {
                written.append(try await Self.append(portal, action: index % 3 == 0 ? "paging.one" : "paging.two", actor: "pager"))
            }
            var seen: [Int64] = []
            var next: String? = "/admin/audit?action=paging"
            var last: Browser.Page?
            while let path = next {
                let page = try await admin.get(path)
                seen += Self.seqs(page)
                last = page
                next = Self.link(page, id: "page-older")
            }
            XCTAssertEqual(seen, written.reversed())
            // And back from the oldest page through the newer links.
            var back = Self.seqs(try XCTUnwrap(last))
            next = last.flatMap { Self.link($0, id: "page-newer") }
            while let path = next {
                let page = try await admin.get(path)
                back = Self.seqs(page) + back
                next = Self.link(page, id: "page-newer")
            }
            XCTAssertEqual(back, written.reversed())
        }
    }

    /// An action prefix is one statement however many actions it stands for (after the one that
    /// finds the actions): a UNION ALL of one keyset query per action, ordered and limited once.
    /// Paging it both ways loses and repeats nothing, also where the actions interleave.
    func testAnActionPrefixIsOneStatement() async throws {
        try await PortalHarness.run { portal in
            var written: [Int64] = []
            for index in 0..<37 {
                written.append(try await Self.append(portal, action: ["prefix.a", "prefix.b", "prefix.c.d"][index % 5 % 3], actor: "p"))
                _ = try await Self.append(portal, action: "prefixed", actor: "p")
            }
            let statements = SQLStatements()
            var logger = Logger(label: "statements") { _ in statements }
            logger.logLevel = .trace
            let db = portal.portal.database.database(logger: logger)
            var filter = AuditFilter()
            filter.action = "prefix."
            // The 3 actions in one statement; and, as a trail with over a hundred actions would
            // be, in two (at most 2 branches each), merged.
            for (search, statementsPerPage) in [(AuditSearch(pageSize: 10), 1), (AuditSearch(pageSize: 10, branchesPerStatement: 2), 2)] {
                var seen: [Int64] = []
                var cursor = AuditCursor.newest
                var oldest: AuditPage?
                while true {
                    statements.reset()
                    let page = try await search.page(filter, at: cursor, on: db)
                    XCTAssertEqual(statements.onAuditLog, 1 + statementsPerPage, "the actions, then the page")
                    XCTAssertLessThanOrEqual(page.entries.count, 10)
                    seen += page.entries.map(\.seq)
                    oldest = page
                    guard let older = page.older else { break }
                    cursor = .before(older)
                }
                XCTAssertEqual(seen, written.reversed())
                var back = try XCTUnwrap(oldest).entries.map(\.seq)
                var newer = oldest?.newer
                while let seq = newer {
                    let page = try await search.page(filter, at: .after(seq), on: db)
                    back = page.entries.map(\.seq) + back
                    newer = page.newer
                }
                XCTAssertEqual(back, written.reversed())
            }
        }
    }

    /// A query that is no form (a repeated key) is a 400, never "no filter": an export would
    /// otherwise hand out the whole trail.
    func testARepeatedQueryKeyIsA400NotNoFilter() async throws {
        try await PortalHarness.run { portal in
            let admin = try await portal.signedIn(.admin)
            for path in ["/admin/audit?actor=a&actor=b", "/admin/audit/export.csv?actor=a&actor=b", "/admin/audit/export.jsonl?actor=a&actor=b"] {
                let page = try await admin.get(path)
                XCTAssertEqual(page.status, .badRequest, path)
            }
            let exports = try await portal.auditActions("audit.export")
            XCTAssertEqual(exports.count, 0)
        }
    }

    /// HEAD (link checkers, probes) shows nobody anything: no audit entry.
    func testHEADRequestsAreNotAuditedAsViews() async throws {
        try await PortalHarness.run { portal in
            let admin = try await portal.signedIn(.admin)
            for path in ["/admin/audit", "/admin/audit/charts", "/admin/sessions", "/admin/lockouts", "/admin/audit/export.csv"] {
                let page = try await admin.send(path, method: .head, body: nil, headers: [:])
                XCTAssertEqual(page.status, .ok, path)
            }
            let views = try await portal.auditActions("audit.view")
            XCTAssertEqual(views.count, 0)
            let exports = try await portal.auditActions("audit.export")
            XCTAssertEqual(exports.count, 0)
        }
    }

    func testCSVExportQuotesAwkwardTextAndDisarmsFormulas() async throws {
        try await PortalHarness.run { portal in
            let awkward = "say \"hi\",\nthen\r\nleave"
            let formula = "=cmd|' /C calc'!A0"
            let first = try await Self.append(portal, action: "csv.test", actor: formula, address: "+49", subject: "@sum", details: ["note": awkward])
            let second = try await Self.append(portal, action: "csv.test", actor: "-minus", subject: "\tTab")
            _ = try await Self.append(portal, action: "other", actor: "x")
            let admin = try await portal.signedIn(.admin)
            let response = try await admin.get("/admin/audit/export.csv?action=csv.test")
            XCTAssertEqual(response.status, .ok)
            XCTAssertEqual(response.headers[.contentType], "text/csv; charset=utf-8")
            XCTAssertTrue(response.headers[.contentDisposition]?.hasPrefix("attachment; filename=\"audit-") ?? false)
            let records = CSVReader.parse(response.body)
            XCTAssertEqual(records.first, ["seq", "time_utc", "actor", "role", "action", "outcome", "address", "request_id", "subject", "details", "prev_hash", "hash"])
            XCTAssertEqual(records.count, 3, response.body)
            XCTAssertEqual(records[1][0], String(first))
            XCTAssertEqual(records[1][2], "'" + formula)
            XCTAssertEqual(records[1][6], "'+49")
            XCTAssertEqual(records[1][8], "'@sum")
            XCTAssertEqual(records[1][9], #"{"note":"say \"hi\",\nthen\r\nleave"}"#)
            XCTAssertEqual(records[2][0], String(second))
            XCTAssertEqual(records[2][2], "'-minus")
            XCTAssertEqual(records[2][8], "'\tTab")
            XCTAssertTrue(response.body.hasSuffix("\r\n"))
            // The export is an audit entry: who, which filter, how many rows.
            let exports = try await portal.auditActions("audit.export")
            let entry = try XCTUnwrap(exports.last)
            XCTAssertEqual(entry.actor, "tt-admin")
            XCTAssertEqual(entry.detailValues["rows"], "2")
            XCTAssertEqual(entry.detailValues["format"], "csv")
            XCTAssertEqual(entry.detailValues["filter"], "action=csv.test")
            XCTAssertEqual(entry.outcome, "success")
        }
    }

    /// German-locale Excel opens a `.csv` with `;` between cells, ignoring our commas and any quote
    /// that is not at its cell's start: a name like `x;=1+1;` must not become a formula cell there
    /// (issue 28, item 2). Every cell of both readings starts with no formula trigger.
    func testCSVExportHasNoFormulaCellWhenReadWithSemicolons() async throws {
        try await PortalHarness.run { portal in
            let tricky = ["x;=1+1;", "x; =1+1", "x,=1+1", "x;+1", "x;-1", "x;@SUM(1)", "x;\"=1+1", "x;\t=1+1", "x\n=1+1"]
            for (index, value) in tricky.enumerated() {
                _ = try await Self.append(portal, action: "csv.semicolon", actor: value, subject: "s;=\(index)", details: ["typed": value])
            }
            let admin = try await portal.signedIn(.admin)
            let response = try await admin.get("/admin/audit/export.csv?action=csv.semicolon")
            XCTAssertEqual(response.status, .ok)
            for separator: Unicode.Scalar in [",", ";", "\t"] {
                for cell in CSVReader.parse(response.body, separator: separator).joined() {
                    let start = cell.drop { $0 == " " }.first
                    XCTAssertFalse(["=", "+", "-", "@", "\t", "\r"].contains(start), "a formula cell in a '\(separator)' reading: \(cell)")
                }
            }
            // Read as RFC 4180, the value is the one written, with the ' before each trigger.
            let records = CSVReader.parse(response.body)
            XCTAssertEqual(records.count, tricky.count + 1)
            XCTAssertEqual(records[1][2], "x;'=1+1;")
            XCTAssertEqual(records[2][2], "x; '=1+1")
            XCTAssertEqual(records[3][2], "x,'=1+1")
            XCTAssertEqual(records[8][2], "x;'\t'=1+1")
            XCTAssertEqual(records[9][2], "x\n'=1+1")
            XCTAssertEqual(records[1][8], "s;'=0")
        }
    }

    /// The export re-verifies on its own: every line's hash recomputed from its fields, the links,
    /// and the entry a signed checkpoint names (so a wrong `at_ms` or `details` would fail).
    func testJSONLinesExportVerifiesAgainstASignedCheckpoint() async throws {
        try await PortalHarness.run { portal in
            _ = try await Self.append(portal, action: "jsonl.test", actor: "line\nbreak \"quoted\" \u{1} é \u{2028}", details: ["x": "=1+2"])
            _ = try await Self.append(portal, action: "jsonl.test", actor: "plain")
            let checkpoint = try await portal.portal.integrity.checkpointNow(now: portal.clock.now, on: portal.db)
            let admin = try await portal.signedIn(.admin)
            let response = try await admin.get("/admin/audit/export.jsonl")
            XCTAssertEqual(response.status, .ok)
            XCTAssertEqual(response.headers[.contentType], "application/jsonl; charset=utf-8")
            let lines = response.body.split(separator: "\n", omittingEmptySubsequences: false)
            XCTAssertEqual(lines.last, "", "every line ends with a newline")
            let stored = try await Self.allRows(portal)
            XCTAssertEqual(lines.count - 1, stored.count - 1, "every entry up to the head when the export began (its own view entry comes after)")
            let signer = try XCTUnwrap(portal.portal.integrity.signer)
            let verifier = AuditExportVerifier(checkpoint: checkpoint, publicKey: signer.publicKey)
            let report = verifier.verify(lines: lines.dropLast().map(String.init))
            XCTAssertTrue(report.isIntact, report.problem ?? "")
            XCTAssertTrue(report.checkpointEntryFound)
            // One changed field is found, by its seq.
            var changed = lines.dropLast().map(String.init)
            changed[0] = changed[0].replacingOccurrences(of: "jsonl.test", with: "jsonl.best")
            XCTAssertEqual(verifier.verify(lines: changed).firstBrokenSeq, stored[0].seq)
        }
    }

    func testChartsCountIssuedRefusedAndFailedSignIns() async throws {
        try await PortalHarness.run { portal in
            for _ in 0..<3 { _ = try await Self.append(portal, action: "teletan.issue", actor: "alice") }
            _ = try await Self.append(portal, action: "teletan.issue", actor: "bob")
            _ = try await Self.append(portal, action: "teletan.issue", outcome: .refused, actor: "bob")
            for _ in 0..<2 { _ = try await Self.append(portal, action: "signin", outcome: .failure, actor: "mallory") }
            _ = try await Self.append(portal, action: "signin", actor: "alice")
            let admin = try await portal.signedIn(.admin)
            let page = try await admin.get("/admin/audit/charts")
            XCTAssertEqual(page.status, .ok)
            XCTAssertEqual(page.body.components(separatedBy: "<svg ").count - 1, 3)
            XCTAssertFalse(page.body.contains("<script>"), "no inline script")
            // The newest hour's row of the hourly table: 4 issued, 1 refused, 2 failed sign-ins.
            let hourly = try XCTUnwrap(page.body.firstMatch(of: /id="per-hour-table">.*?<tbody><tr><th scope="row">[^<]*<\/th><td>(\d+)<\/td><td>(\d+)<\/td><td>(\d+)<\/td>/.dotMatchesNewlines()))
            XCTAssertEqual([String(hourly.output.1), String(hourly.output.2), String(hourly.output.3)], ["4", "1", "2"])
            let daily = try XCTUnwrap(page.body.firstMatch(of: /id="per-day-table">.*?<tbody><tr><th scope="row">[^<]*<\/th><td>(\d+)<\/td><td>(\d+)<\/td><td>(\d+)<\/td>/.dotMatchesNewlines()))
            XCTAssertEqual([String(daily.output.1), String(daily.output.2), String(daily.output.3)], ["4", "1", "2"])
            // Per user per day: alice 3 and bob 1 today (the last column).
            XCTAssertNotNil(page.body.firstMatch(of: /<tr><th scope="row">alice<\/th>(<td>0<\/td>){13}<td>3<\/td><\/tr>/))
            XCTAssertNotNil(page.body.firstMatch(of: /<tr><th scope="row">bob<\/th>(<td>0<\/td>){13}<td>1<\/td><\/tr>/))
        }
    }

    /// Days are the authority's (Europe/Berlin), not UTC's: 23:30Z is already tomorrow there.
    func testChartDaysAreTheAuthoritysDays() async throws {
        try await PortalHarness.run { portal in
            // The clock starts at 2027-01-15 08:00Z; go back to 22:30Z (23:30 CET) the day before.
            portal.clock.advance(seconds: -9.5 * 3600)
            _ = try await Self.append(portal, action: "teletan.issue", actor: "alice")
            portal.clock.advance(seconds: 3600)  // 23:30Z: 00:30 CET on the 15th
            _ = try await Self.append(portal, action: "teletan.issue", actor: "alice")
            _ = try await Self.append(portal, action: "teletan.issue", actor: "alice")
            portal.clock.advance(seconds: 8.5 * 3600)
            let admin = try await portal.signedIn(.admin)
            let page = try await admin.get("/admin/audit/charts")
            let rows = page.body.firstMatch(of: /id="per-day-table">.*?<tbody>(.*?)<\/tbody>/.dotMatchesNewlines()).map { String($0.output.1) } ?? ""
            let counts = rows.matches(of: /<tr><th scope="row">([^<]*)<\/th><td>(\d+)<\/td>/).prefix(2).map { "\($0.output.1)=\($0.output.2)" }
            XCTAssertEqual(counts, ["15 Jan=2", "14 Jan=1"], rows)
        }
    }

    func testEndingASessionSignsThatUserOutAndIsAudited() async throws {
        try await PortalHarness.run { portal in
            let officer = try await portal.signedIn(.officer, address: "198.51.100.20")
            let before = try await officer.get("/")
            XCTAssertEqual(before.status, .ok)
            let admin = try await portal.signedIn(.admin)
            let list = try await admin.get("/admin/sessions")
            XCTAssertEqual(list.status, .ok)
            XCTAssertTrue(list.body.contains("tt-officer"))
            // Never the session id, nor its database key.
            let cookie = try XCTUnwrap(officer.cookies[SessionMiddleware.cookieName])
            XCTAssertFalse(list.body.contains(cookie))
            XCTAssertFalse(list.body.contains(portal.portal.foundation.hasher.hash(cookie, for: .session)))
            let handle = try XCTUnwrap(list.body.firstMatch(of: /<tr id="session-([0-9a-f]{32})" class="session">\s*<td class="username">tt-officer</).map { String($0.output.1) })
            // Their own session has no End session button, and the server refuses it too.
            let ownHandle = try XCTUnwrap(list.body.firstMatch(of: /<tr id="session-([0-9a-f]{32})" class="session">\s*<td class="username">tt-admin</).map { String($0.output.1) })
            XCTAssertEqual(list.body.matches(of: /class="end-session"/).count, 1)
            let own = try await admin.post("/admin/sessions/end", ["csrf": list.hidden("csrf") ?? "", "session": ownHandle, "username": "tt-admin"])
            XCTAssertEqual(own.location, "/admin/sessions?result=own")
            let stillSignedIn = try await admin.get("/")
            XCTAssertEqual(stillSignedIn.status, .ok)

            let noCSRF = try await admin.post("/admin/sessions/end", ["csrf": "wrong", "session": handle, "username": "tt-officer"])
            // The handle must belong to the user named with it.
            let otherUser = try await admin.post("/admin/sessions/end", ["csrf": list.hidden("csrf") ?? "", "session": handle, "username": "tt-hotline"])
            XCTAssertEqual(otherUser.location, "/admin/sessions?result=gone")
            XCTAssertEqual(noCSRF.status, .forbidden)
            let ended = try await admin.post("/admin/sessions/end", ["csrf": list.hidden("csrf") ?? "", "session": handle, "username": "tt-officer"])
            XCTAssertEqual(ended.location, "/admin/sessions?result=ended")
            let next = try await officer.get("/")
            XCTAssertTrue(next.location?.hasPrefix("/signin") ?? false, "\(next.status) \(next.location ?? "")")
            let again = try await admin.post("/admin/sessions/end", ["csrf": list.hidden("csrf") ?? "", "session": handle, "username": "tt-officer"])
            XCTAssertEqual(again.location, "/admin/sessions?result=gone")
            let entries = try await portal.auditActions("admin.session.end")
            XCTAssertEqual(entries.map(\.outcome), ["refused", "success"])
            XCTAssertEqual(entries.last?.subject, "user:tt-officer")
            XCTAssertEqual(entries.last?.actor, "tt-admin")
        }
    }

    func testSessionsListShowsRolesTimesAndAddress() async throws {
        try await PortalHarness.run { portal in
            _ = try await portal.signedIn(.hotline, address: "203.0.113.44")
            let admin = try await portal.signedIn(.admin)
            let page = try await admin.get("/admin/sessions")
            let row = try XCTUnwrap(page.body.firstMatch(of: /<td class="username">tt-hotline<\/td>(.*?)<\/tr>/.dotMatchesNewlines()).map { String($0.output.1) })
            XCTAssertTrue(row.contains("Hotline"), row)
            XCTAssertTrue(row.contains("203.0.113.44"), row)
        }
    }

    func testLiftingALockLetsTheNameSignInAgainAndIsAudited() async throws {
        try await PortalHarness.run { portal in
            let until = portal.clock.now.addingTimeInterval(900)
            try await Lockouts().lock(scope: "user", key: "tt-officer", until: until, now: portal.clock.now, on: portal.db)
            try await Lockouts().lock(scope: "address", key: "192.0.2.77", until: until, now: portal.clock.now, on: portal.db)
            let admin = try await portal.signedIn(.admin)
            let page = try await admin.get("/admin/lockouts")
            XCTAssertEqual(page.status, .ok)
            XCTAssertTrue(page.body.contains("tt-officer") && page.body.contains("192.0.2.77"))
            XCTAssertEqual(page.body.matches(of: /class="lift-lock"/).count, 2)
            let lifted = try await admin.post("/admin/lockouts/lift", ["csrf": page.hidden("csrf") ?? "", "scope": "user", "key": "tt-officer"])
            XCTAssertEqual(lifted.location, "/admin/lockouts?result=lifted")
            let verdict = try await portal.portal.signIn.throttle.check(username: "tt-officer", address: nil, now: portal.clock.now, on: portal.db)
            XCTAssertEqual(verdict, .allowed)
            let after = try await admin.get("/admin/lockouts")
            XCTAssertFalse(after.body.contains(">tt-officer<"))
            XCTAssertTrue(after.body.contains("192.0.2.77"))
            let twice = try await admin.post("/admin/lockouts/lift", ["csrf": page.hidden("csrf") ?? "", "scope": "user", "key": "tt-officer"])
            XCTAssertEqual(twice.location, "/admin/lockouts?result=gone")
            let other = try await admin.post("/admin/lockouts/lift", ["csrf": page.hidden("csrf") ?? "", "scope": "guessing", "key": "x"])
            XCTAssertEqual(other.status, .badRequest)
            let entries = try await portal.auditActions("admin.lockout.lift")
            XCTAssertEqual(entries.map(\.subject), ["user:tt-officer"])
        }
    }

    /// Issue 18, item 12: a lock on the Lockouts page says what led to it (failed sign-ins since
    /// the last good one, where from, the last attempt) and links to those entries; the locked
    /// name's sign-in page says how long the lock lasts.
    func testALockShowsItsFailuresAndTheSignInPageItsDuration() async throws {
        try await PortalHarness.run { portal in
            _ = try await Self.append(portal, action: "signin", actor: "tt-officer", address: "192.0.2.4")
            portal.clock.advance(seconds: 60)
            for address in ["192.0.2.5", "192.0.2.6", "192.0.2.5"] {
                _ = try await Self.append(portal, action: "signin", outcome: .failure, actor: "TT-Officer", address: address)
                portal.clock.advance(seconds: 7)
            }
            try await Lockouts().lock(scope: "user", key: "tt-officer", until: portal.clock.now.addingTimeInterval(900), now: portal.clock.now,
                                      on: portal.db)
            let admin = try await portal.signedIn(.admin)
            let page = try await admin.get("/admin/lockouts")
            XCTAssertTrue(page.body.contains("class=\"lock-failures\">3<"), page.body)
            XCTAssertTrue(page.body.contains("class=\"lock-others\">192.0.2.5, 192.0.2.6<"), page.body)
            XCTAssertNotNil(page.body.firstMatch(of: /class="lock-last">[^<]*\d\d:\d\d:\d\d/), page.body)
            XCTAssertTrue(page.body.contains("href=\"/admin/audit?actor=tt-officer&amp;action=signin\""), page.body)
            let entries = try await admin.get("/admin/audit?actor=tt-officer&action=signin")
            XCTAssertEqual(Self.seqs(entries).count, 4)

            let locked = try await portal.browser().signIn("tt-officer", "whatever-1")
            XCTAssertEqual(locked.status, .tooManyRequests)
            XCTAssertTrue(locked.body.contains("Signing in is locked for 15 minutes"), locked.body)
        }
    }

    /// A lock of an IPv6 /64 (issue 28, item 5) lists the names its addresses tried; the search,
    /// which matches single addresses, gets no link.
    func testALockOfAnIPv6Slash64ShowsTheFailuresFromItsAddresses() async throws {
        try await PortalHarness.run { portal in
            for (name, address) in [("alice", "2001:db8:5:6::1"), ("bob", "2001:db8:5:6:ffff::2"), ("carol", "2001:db8:5:7::1")] {
                _ = try await Self.append(portal, action: "signin", outcome: .failure, actor: name, address: address)
            }
            try await Lockouts().lock(scope: "address", key: "2001:db8:5:6::/64", until: portal.clock.now.addingTimeInterval(900),
                                      now: portal.clock.now, on: portal.db)
            let admin = try await portal.signedIn(.admin)
            let page = try await admin.get("/admin/lockouts")
            XCTAssertTrue(page.body.contains("2001:db8:5:6::/64"), page.body)
            XCTAssertTrue(page.body.contains("class=\"lock-failures\">2<"), page.body)
            XCTAssertTrue(page.body.contains("class=\"lock-others\">bob, alice<"), page.body)
            XCTAssertFalse(page.body.contains("/admin/audit?address="), page.body)
        }
    }

    /// Issue 18, item 12: a check that found nothing to check (as the one right after start on a
    /// new trail) says so, not "intact, 0 entries".
    func testAChainCheckWithNothingToCheckSaysSo() async throws {
        try await PortalHarness.run { portal in
            let run = try await portal.portal.auditReview.integrity.verify(full: false, now: portal.clock.now, on: portal.db)
            XCTAssertEqual(run.checkedEntries, 0)
            let admin = try await portal.signedIn(.admin)
            let shown = try await admin.get("/admin/audit")
            XCTAssertTrue(shown.body.contains("id=\"chain-nothing-yet\""), shown.body)
            XCTAssertFalse(shown.body.contains("id=\"chain-intact\""))
            // Once there is something, the check says intact.
            let again = try await admin.post("/admin/audit/verify", ["csrf": shown.hidden("csrf") ?? "", "scope": "incremental"])
            let checked = try await admin.get(try XCTUnwrap(again.location))
            XCTAssertTrue(checked.body.contains("id=\"chain-intact\""), checked.body)
        }
    }

    /// Watching the watchers: opening the pages, looking up and exporting are audit entries.
    func testOpeningTheAdminPagesIsAudited() async throws {
        try await PortalHarness.run { portal in
            let admin = try await portal.signedIn(.admin)
            let fingerprint = String(repeating: "ab", count: 32)
            for path in ["/admin/audit?actor=alice", "/admin/audit/entries/1", "/admin/audit/charts", "/admin/sessions", "/admin/lockouts",
                         "/admin/audit/teletans/\(fingerprint)"] {
                _ = try await admin.get(path)
            }
            _ = try await admin.get("/admin/audit/export.jsonl?actor=alice")
            let views = try await portal.auditActions("audit.view")
            XCTAssertEqual(views.map { $0.detailValues["page"] }, ["search", "entry", "charts", "sessions", "lockouts", "teletan"])
            XCTAssertEqual(views.last?.subject, fingerprint)
            XCTAssertEqual(views.first?.detailValues["filter"], "actor=alice")
            XCTAssertTrue(views.allSatisfy { $0.actor == "tt-admin" && $0.role == "admin" })
            let exports = try await portal.auditActions("audit.export")
            XCTAssertEqual(exports.first?.detailValues["format"], "jsonl")
        }
    }

    /// Issue 28, item 1: the scheduled full check (`--audit-full-check-interval`, daily) finds an
    /// entry below the newest checkpoint changed around the triggers; its result stays on the page
    /// beside the checks of new entries, which report it too, as does the metric; it is audited;
    /// and nothing is signed until a later full check passes.
    func testTheScheduledFullCheckFindsTamperingBelowTheCheckpointAndKeepsItInView() async throws {
        try await PortalHarness.run { portal in
            for index in 0..<120 { _ = try await Self.append(portal, action: "chain.test", actor: "a\(index)") }
            try await portal.portal.runCleanup()  // signs the first checkpoint
            let first = try await portal.portal.integrity.latestCheckpoint(on: portal.db)
            let signed = try XCTUnwrap(first)
            XCTAssertGreaterThan(signed.seq, 100)
            for index in 0..<3 { _ = try await Self.append(portal, action: "chain.test", actor: "b\(index)") }
            let entry = try await Audit.AuditEntry.find(100, on: portal.db)
            let original = try XCTUnwrap(entry?.actor)
            try await TamperedAudit.change(seq: 100, on: portal.db)

            portal.clock.advance(seconds: 86400)
            try await portal.portal.runCleanup()
            let scheduled = try await portal.auditActions("audit.verify").filter { $0.detailValues["reason"] == "schedule" }
            XCTAssertEqual(scheduled.last?.outcome, "failure", "the scheduled full check is audited")
            XCTAssertEqual(scheduled.last?.detailValues["first_bad_seq"], "100")
            XCTAssertEqual(scheduled.last?.detailValues["scope"], "full")
            let afterJob = try await portal.portal.integrity.latestCheckpoint(on: portal.db)
            XCTAssertEqual(afterJob, signed, "nothing signed over the broken history, though a checkpoint is due")
            let metrics = try await portal.metrics()
            XCTAssertNotNil(metrics.firstMatch(of: /portal_audit_chain_intact 0(\.0)?\s/), metrics)

            // Check new entries: from the checkpoint, above the change; it reports the full check.
            let admin = try await portal.signedIn(.admin)
            let page = try await admin.get("/admin/audit")
            let checked = try await admin.post("/admin/audit/verify", ["csrf": page.hidden("csrf") ?? "", "scope": "incremental"])
            let shown = try await admin.get(try XCTUnwrap(checked.location))
            XCTAssertTrue(shown.body.contains("id=\"chain-broken\""), shown.body)
            XCTAssertTrue(shown.body.contains("id=\"first-bad-seq\">100</a>"), shown.body)
            XCTAssertTrue(shown.body.contains("id=\"last-full-check\""), shown.body)
            XCTAssertTrue(shown.body.contains("<a href=\"/admin/audit/entries/100\" id=\"full-check-first-bad-seq\">100</a>"), shown.body)
            let stillZero = try await portal.metrics()
            XCTAssertNotNil(stillZero.firstMatch(of: /portal_audit_chain_intact 0(\.0)?\s/), stillZero)

            // Repaired, a full check passes: the page clears, and the job signs again.
            try await TamperedAudit.change(seq: 100, actor: original, on: portal.db)
            _ = try await admin.post("/admin/audit/verify", ["csrf": page.hidden("csrf") ?? "", "scope": "full"])
            await portal.portal.auditReview.audit.fullCheck.wait()
            _ = try await admin.post("/admin/audit/verify", ["csrf": page.hidden("csrf") ?? "", "scope": "incremental"])
            let cleared = try await admin.get("/admin/audit")
            XCTAssertTrue(cleared.body.contains("id=\"chain-intact\""), cleared.body)
            XCTAssertTrue(cleared.body.contains("id=\"full-check-intact\""), cleared.body)
            portal.clock.advance(seconds: 60)
            try await portal.portal.runCleanup()
            let resumed = try await portal.portal.integrity.latestCheckpoint(on: portal.db)
            XCTAssertGreaterThan(resumed?.seq ?? 0, signed.seq, "signing resumes once a full check passed")
            let intact = try await portal.metrics()
            XCTAssertNotNil(intact.firstMatch(of: /portal_audit_chain_intact 1(\.0)?\s/), intact)
        }
    }

    func testTheChainCheckOnThePageNamesTheFirstBadEntry() async throws {
        try await PortalHarness.run { portal in
            var written: [Int64] = []
            for index in 0..<5 { written.append(try await Self.append(portal, action: "chain.test", actor: "a\(index)")) }
            let admin = try await portal.signedIn(.admin)
            let page = try await admin.get("/admin/audit")
            // Everything: in the background; the page says so, and shows the result once it ran.
            let intact = try await admin.post("/admin/audit/verify", ["csrf": page.hidden("csrf") ?? "", "scope": "full"])
            XCTAssertEqual(intact.location, "/admin/audit?verified=started#integrity")
            await portal.portal.auditReview.audit.fullCheck.wait()
            let shown = try await admin.get("/admin/audit?verified=started")
            XCTAssertTrue(shown.body.contains("id=\"verify-notice\""))
            XCTAssertTrue(shown.body.contains("id=\"chain-intact\""), shown.body)
            try await TamperedAudit.change(seq: written[2], on: portal.db)
            // New entries only: from the last checkpoint (none yet), so it sees the change too, at once.
            let incremental = try await admin.post("/admin/audit/verify", ["csrf": page.hidden("csrf") ?? "", "scope": "incremental"])
            XCTAssertEqual(incremental.location, "/admin/audit?verified=done#integrity")
            _ = try await admin.post("/admin/audit/verify", ["csrf": page.hidden("csrf") ?? "", "scope": "full"])
            await portal.portal.auditReview.audit.fullCheck.wait()
            let broken = try await admin.get("/admin/audit?verified=done")
            XCTAssertTrue(broken.body.contains("id=\"chain-broken\""), broken.body)
            XCTAssertTrue(broken.body.contains("<a href=\"/admin/audit/entries/\(written[2])\" id=\"first-bad-seq\">\(written[2])</a>"), broken.body)
            let checks = try await portal.auditActions("audit.verify")
            XCTAssertEqual(checks.map(\.outcome), ["success", "failure", "failure"])
            XCTAssertEqual(checks.map { $0.detailValues["scope"] }, ["full", "incremental", "full"])
            XCTAssertEqual(checks.last?.detailValues["first_bad_seq"], String(written[2]))
        }
    }
}

extension AuditReviewTests {
    /// Every entry, oldest first.
    static func allRows(_ portal: TestPortal) async throws -> [AuditRow] {
        let search = portal.portal.auditReview.audit.search
        let everything = try await search.prepare(AuditFilter(), on: portal.db)
        return try await search.batch(XCTUnwrap(everything), after: 0, upTo: .max, limit: 100_000, on: portal.db)
    }
}

/// Changes a stored audit row the way someone with database access could: around the triggers.
enum TamperedAudit {
    static func change(seq: Int64, actor: String = "mallory", on db: any Database) async throws {
        let sql = db as! any SQLDatabase
        if isPostgreSQL(db) {
            try await sql.raw("ALTER TABLE audit_log DISABLE TRIGGER USER").run()
            try await sql.raw("UPDATE audit_log SET actor = \(bind: actor) WHERE seq = \(bind: seq)").run()
            try await sql.raw("ALTER TABLE audit_log ENABLE TRIGGER USER").run()
        } else {
            try await sql.raw("DROP TRIGGER IF EXISTS audit_log_no_update").run()
            try await sql.raw("UPDATE audit_log SET actor = \(bind: actor) WHERE seq = \(bind: seq)").run()
        }
    }
}

/// RFC 4180 records, for checking the CSV export; with `separator: ";"` the file as German-locale
/// Excel or LibreOffice opens it. A quote opens a quoted field only at the field's start (as in
/// those spreadsheets and Python's csv module); elsewhere it is text. A lone LF ends a record too.
enum CSVReader {
    static func parse(_ text: String, separator: Unicode.Scalar = ",") -> [[String]] {
        var records: [[String]] = [], record: [String] = [], field = "", quoted = false, fieldStart = true
        var characters = Array(text.unicodeScalars)[...]
        while let character = characters.popFirst() {
            if quoted {
                if character == "\"" {
                    if characters.first == "\"" { field.unicodeScalars.append("\""); characters.removeFirst() } else { quoted = false }
                } else {
                    field.unicodeScalars.append(character)
                }
                continue
            }
            if character == "\"", fieldStart {
                quoted = true
                fieldStart = false
            } else if character == separator {
                record.append(field); field = ""
                fieldStart = true
            } else if character == "\r" || character == "\n" {
                if character == "\r", characters.first == "\n" { characters.removeFirst() }
                record.append(field); records.append(record); record = []; field = ""
                fieldStart = true
            } else {
                field.unicodeScalars.append(character)
                fieldStart = false
            }
        }
        if !field.isEmpty || !record.isEmpty { record.append(field); records.append(record) }
        return records
    }
}

/// Counts the SQL statements a database sends (the drivers log each one at trace level).
final class SQLStatements: LogHandler, @unchecked Sendable {
    private let statements = Mutex<[String]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String, function: String, line: UInt) {
        guard message.description == "Executing query", let sql = metadata?["sql"] else { return }
        statements.withLock { $0.append(sql.description) }
    }

    func reset() { statements.withLock { $0.removeAll() } }

    /// The statements that read or wrote the audit trail.
    var onAuditLog: Int { statements.withLock { $0.filter { $0.contains("audit_log") }.count } }
}
