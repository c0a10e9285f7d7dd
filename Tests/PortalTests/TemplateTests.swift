import Foundation
import TestSupport
import XCTest
@testable import AuditReview
@testable import Hotline
@testable import Issuance
@testable import Portal
@testable import PortalWeb
@testable import SignIn

/// Every template under Templates/ rendered against its page model, in both languages, signed in
/// and not, in the renderer's checking mode: a name a template uses that neither the model (nor
/// the model of an enclosing section) nor the shared values (`t`, `lang`, `user` …) answer fails
/// the test, as does a text `t.key` missing from a language's table and a template no page
/// renders (itself or as a partial of one).
final class TemplateTests: XCTestCase {
    func testEveryTemplateUsesOnlyNamesItsModelHas() throws {
        let renderer = try Self.renderer()
        let user = UserBanner(username: "officer", csrf: "token", roles: "Officer")
        for page in Self.samples + Self.emptySamples {
            for language in Language.allCases {
                for user in [user, nil] {
                    let check = TemplateCheck()
                    _ = try renderer.html(page, language: language, requestID: "request", user: user, checking: check)
                    XCTAssertEqual(check.unresolved, [], "\(type(of: page).template) (\(language), signed in: \(user != nil))")
                }
            }
        }
    }

    func testEveryTemplateIsRenderedByAPage() throws {
        let templates = try Self.templates()
        var rendered = Set(Self.samples.map { type(of: $0).template })
        // A partial counts as rendered when a rendered template includes it.
        var unread = Array(rendered)
        while let name = unread.popLast() {
            let text = try XCTUnwrap(templates[name], "no template \(name) for a page model")
            for match in text.matches(of: /\{\{>\s*([a-z\-\/]+)\s*\}\}/) where rendered.insert(String(match.output.1)).inserted {
                unread.append(String(match.output.1))
            }
        }
        XCTAssertEqual(Set(templates.keys).subtracting(rendered), [], "templates no page renders")
    }

    /// The checking mode finds what it is for: a name no model has, a further part of a name the
    /// first part's model lacks, and a text key no table has; and not a name an enclosing
    /// model answers.
    func testTheCheckFindsUnknownNames() throws {
        let renderer = try Self.renderer(extra: [
            "test/probe": "{{missing}}{{#links}}{{t.app_name}}{{recent}}{{teleTANWaiting}}{{absent}}{{/links}}{{links.nothing}}{{t.no_such_text}}",
        ])
        let check = TemplateCheck()
        _ = try renderer.html(ProbePage(), language: .english, requestID: "request", user: nil, checking: check)
        XCTAssertEqual(check.unresolved, ["missing", "absent", "links.nothing", "t.no_such_text"])
    }

    /// A declared value that is nil renders empty and is false, and does not fall back to an
    /// enclosing model's value of the same name.
    func testANilValueDoesNotFallBackToTheEnclosingModel() throws {
        let renderer = try Self.renderer(extra: [
            "test/probe": "[{{#inner}}{{notice}}|{{#notice}}yes{{/notice}}{{^notice}}no{{/notice}}{{/inner}}][{{notice}}]",
        ])
        let html = try renderer.html(ProbePage(), language: .english, requestID: "request", user: nil)
        XCTAssertEqual(html, "[|no][outer]")
    }

    /// Every kind of value a model may hold renders as Mustache shows it; a number type other
    /// than `Int` (which encodes itself through a single-value container) does not recurse.
    func testEveryKindOfValueRenders() throws {
        let renderer = try Self.renderer(extra: [
            "test/kinds": "{{text}}|{{flag}}|{{count}}|{{big}}|{{small}}|{{ratio}}|{{kind}}|{{#rows}}[{{text}}]{{/rows}}|{{missing}}|{{#empty(none)}}none{{/empty(none)}}",
        ])
        let html = try renderer.html(KindsPage(), language: .english, requestID: "request", user: nil)
        XCTAssertEqual(html, "a &amp; b|true|3|9000000000|7|0.5|second|[x][y]||none")
    }

    /// A model with its own `encode(to:)` that fills a list through a nested container: the list
    /// is read as it stands when the render looks it up.
    func testAListFilledThroughANestedContainerRenders() throws {
        let renderer = try Self.renderer(extra: ["test/nested": "{{#rows}}[{{.}}]{{/rows}}"])
        XCTAssertEqual(try renderer.html(NestedListPage(), language: .english, requestID: "request", user: nil), "[a][b]")
    }

    private struct NestedListPage: PageModel {
        static let template = "test/nested"
        var titleKey: String { "app_name" }
        enum Keys: String, CodingKey { case rows }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var rows = container.nestedUnkeyedContainer(forKey: .rows)
            try rows.encode("a")
            try rows.encode("b")
        }
    }

    private struct KindsPage: PageModel {
        enum Kind: String, Encodable { case first, second }
        struct Row: TemplateValues { let text: String }
        static let template = "test/kinds"
        let titleKey = "app_name"
        let text = "a & b"
        let flag = true
        let count = 3
        let big: Int64 = 9_000_000_000
        let small: UInt8 = 7
        let ratio = 0.5
        let kind = Kind.second
        let rows = [Row(text: "x"), Row(text: "y")]
        let missing: String? = nil
        let none: [Row] = []
    }

    private struct ProbePage: PageModel {
        static let template = "test/probe"
        let titleKey = "app_name"

        struct Inner: TemplateValues {
            let notice: String? = nil
        }

        func derivedValue(named name: String) -> any TemplateValue {
            switch name {
            case "teleTANWaiting": true
            case "links": HomePage.Links(recent: true, hotline: false, overview: false, audit: false, sessions: false, quota: false)
            case "notice": "outer"
            case "inner": Inner()
            default: .undeclared
            }
        }
    }

    static func templates() throws -> [String: String] {
        try AssetFiles.load(templatesDirectory: repositoryRoot.appendingPathComponent("Templates").path).templates
    }

    static func renderer(extra: [String: String] = [:]) throws -> PageRenderer {
        let assets = try AssetFiles.load(templatesDirectory: repositoryRoot.appendingPathComponent("Templates").path)
        return try PageRenderer(
            assets: AssetFiles(templates: assets.templates.merging(extra) { $1 }, publicFiles: assets.publicFiles),
            strings: PortalApp.strings, timeZone: TimeZone(identifier: "Europe/Berlin")!)
    }

    /// One or more models of every page, with every optional value set and every list filled
    /// (two rows where a row's flag chooses between sections), so that every section is entered;
    /// ``emptySamples`` enters the inverted ones.
    static var samples: [any PageModel] {
        let entry = EntryItem(
            seq: "7", time: "24 Nov 2026, 10:00:07 CET", timeISO: "2026-11-24T09:00:07.000Z", actor: "admin",
            action: "audit.view", outcome: "success", outcomeLabel: "Success", roleLabel: "Administrator", address: "192.0.2.1",
            subjectShort: "call:1234", details: "page=search", rawDetails: "page=search")
        let event = EventSection(
            authorities: [.init(id: "HA1", name: "Health authority", selected: true)], reasonValue: "case 12",
            reasonError: "Too long", directNonce: "nonce", twoPerson: true,
            ownRequests: [.init(id: "r1", requestedBy: "officer", authority: "HA1", requestedAt: "10:00", reason: "case",
                                status: "approved", approvedNonce: "nonce", mayWithdraw: true)],
            toApprove: [.init(id: "r2", requestedBy: "other", authority: "HA1", requestedAt: "10:00", reason: "case",
                              status: "", approvedNonce: nil, mayWithdraw: false)],
            waitingForApproval: "1 request waits", approvedOwn: ["approved by other"], notice: "Requested")
        let call = RecentPage.Call(id: "c1", startedAt: "10:00", outcome: "teleTAN issued")
        func callPage(_ step: CallPage.Step) -> CallPage {
            CallPage(
                callID: "c1", startedAt: "10:00", fromCallback: true,
                caller: .init(phone: "0171 234", phoneLink: "tel:+49171234", name: "Caller"),
                idleNotice: "Without activity …", idleSeconds: 1800, sayCallback: "We delete your number …", step: step,
                checks: [.init(id: "identity", label: "Identity", say: "Ask", sayOther: "Frag", required: true, checked: false, missing: true)],
                issueNonce: "nonce", form: .init(phone: "0171", name: "Name", errorField: "phone"),
                outcomes: [.init(value: "no_teletan", label: "No teleTAN")], error: "Error", notice: "Notice",
                repeatWarning: "This number received a teleTAN", teleTANWaiting: true, otherLanguage: "de",
                readBack: .init(message: "Differs", matched: false, differences: ["1: A"], mayTryAgain: true, attemptsLeft: "4 left",
                                exhausted: true),
                endedSummary: "Ended")
        }
        func search(intact: Bool) -> SearchPage {
            SearchPage(
                form: .init(actor: "admin", action: "signin", outcomes: [.init(value: "", label: "Any", selected: true)],
                            from: "2026-11-01", to: "2026-11-24", address: "192.0.2.1", subject: "user:x", showOwnViews: true,
                            invalid: ["actor"], teleTANFields: ["subject"]),
                knownActions: ["signin"], filterError: "Cannot read", entries: [entry], filtered: true,
                olderLink: "/admin/audit?before=1", newerLink: "/admin/audit?after=9", newestLink: "/admin/audit",
                csvLink: "/admin/audit/export.csv", jsonlLink: "/admin/audit/export.jsonl", lookupError: "Not a teleTAN",
                integrity: .init(
                    lastRun: .init(time: "10:00", scope: "full", range: "1-7", intact: intact, nothingYet: false, brokenSeq: "3", problem: "hash"),
                    checkpoint: .init(seq: "7", time: "10:00", keyID: "key"),
                    lastFull: .init(time: "09:00", scope: "full", range: "1-5", intact: intact, nothingYet: false, brokenSeq: "2", problem: "hash")),
                verifyNotice: "Done")
        }
        return [
            ErrorPage(status: 404, message: "Not found"),
            SignInPage(csrf: "token", username: "officer", notice: "Signed out", error: "Wrong", details: ["PAM says"]),
            SignInStepPage(csrf: "token", prompt: "Code", echo: true, messages: ["Message"]),
            SignInStepPage(csrf: "token", prompt: "Secret", echo: false, messages: []),
            PasswordChangePage(csrf: "token", messages: ["Expired"]),
            HomePage(
                teleTANWasHidden: true, teleTANWaiting: true, issueNonce: "nonce", mayIssue: true, event: event,
                links: .init(recent: true, hotline: true, overview: true, audit: true, sessions: true, quota: true)),
            HomePage(
                teleTANWasHidden: false, teleTANWaiting: false, issueNonce: nil, mayIssue: false, event: nil,
                links: .init(recent: false, hotline: false, overview: false, audit: false, sessions: false, quota: false)),
            NoRolePage(),
            AlreadyShownPage(),
            ResultPage(
                groups: [.init(text: "ABC", spelled: "Alfa - Bravo - Charlie")], type: "EVENT", healthAuthority: "HA1",
                reference: "R-1", callID: "c1", validUntil: "24 Nov", validUntilISO: "2026-11-24T10:00:00Z", hideAfterSeconds: 60,
                hiddenAfterText: "Hidden after 1 minute"),
            EventRequestPage(event: event),
            RecentPage(
                items: [.init(id: "i1", reference: "R-1", type: "TEST", healthAuthority: "HA1", issuedAt: "10:00", validUntil: "11:00",
                              status: "Unused", statusKey: "unused", revokeReason: "Wrong person", call: call, mayRevoke: true)],
                notice: "Revoked", statusUnknown: true),
            RevokePage(
                id: "i1", reference: "R-1", type: "TEST", healthAuthority: "HA1", issuedAt: "10:00", call: call,
                reasons: [.init(code: "wrong_person", label: "Wrong person", checked: true)], note: "note", maxNote: 80,
                problem: .reason, error: "Choose a reason"),
            HotlineHomePage(openCalls: [.init(id: "c1", startedAt: "10:00")], callbacksWaiting: "2 waiting", notice: "Ended",
                            mayViewOverview: true),
            callPage(.checks), callPage(.readBack), callPage(.ended),
            CallbackQueuePage(
                intro: "The queue",
                entries: [
                    .init(id: "b1", maskedNumber: "0171 …", waitingSince: "10:00", attempts: "1 of 3", takenBy: "other", mine: true,
                          mayTake: true, repeatWarning: "This number received a teleTAN"),
                ],
                closed: [.init(queuedAt: "09:00", closedAt: "10:00", outcome: "Reached", attempts: "1")], notice: "Taken"),
            CallbackPage(id: "b1", phone: "0171 234", phoneLink: "tel:+49171234", name: "Caller", queuedAt: "10:00", attempts: "1 of 3",
                         repeatWarning: "This number received a teleTAN", holdUntil: "10:15"),
            OverviewPage(outcomes: [.init(label: "Issued", today: 1, week: 2)], totalToday: 1, totalWeek: 2, callbacksWaiting: 1,
                         oldestWait: "5 minutes", days: [.init(day: "24 Nov", count: 1)]),
            search(intact: true), search(intact: false),
            EntryPage(
                entry: entry, requestID: "request", subject: "call:1234", details: [.init(key: "page", value: "search")],
                previousHash: "00", hash: "11", actorLink: "/admin/audit?actor=admin", subjectLink: "/admin/audit?subject=x",
                teleTANLink: "/admin/audit/teletans/ff", previousLink: "/admin/audit/entries/6", nextLink: "/admin/audit/entries/8"),
            TeleTANPage(
                found: true, issuedAt: "10:00", issuedBy: "officer", issuanceLink: "/admin/audit/entries/1", type: "TEST",
                validUntil: "11:00", status: "Unused", statusKey: "unused", callLink: "/admin/audit?subject=call:1", entries: [entry],
                subjectLink: "/admin/audit?subject=ff"),
            ChartsPage(
                charts: [.init(id: "per-day", heading: "Per day", svg: "<svg></svg>",
                               table: .init(caption: "Per day", firstColumn: "Day", columns: ["Issued"],
                                            rows: [.init(label: "24 Nov", cells: ["1"])]))],
                timeZone: "Europe/Berlin"),
            SessionsPage(
                items: [
                    .init(handle: "h1", username: "officer", roles: "Officer", since: "10:00", lastSeen: "10:05", address: "192.0.2.1", isOwn: true),
                    .init(handle: "h2", username: "other", roles: "Hotline", since: "10:00", lastSeen: "10:05", address: "-", isOwn: false),
                ],
                notice: "Ended"),
            LockoutsPage(
                items: [.init(scope: "user", scopeLabel: "User", key: "officer", until: "10:15", failures: "5", others: "192.0.2.1",
                              lastAttempt: "10:00", entriesLink: "/admin/audit?actor=officer&action=signin")],
                notice: "Lifted"),
            QuotaPage(
                items: [.init(scope: "portal", name: "Whole portal", quota: 300, extra: 5, limit: 305, used: 12, left: 293,
                              how: "Prediction from 14 days", basis: [.init(day: "2027-01-01", issued: 100)])],
                raises: [.init(name: "Whole portal", amount: 5, reason: "Outbreak", raisedBy: "admin", raisedAt: "10:00")],
                options: [.init(scope: "portal", name: "Whole portal", selected: true)], form: .init(scope: "portal", amount: "x", reason: ""),
                maxAmount: 100_000, maxReason: 80, resetsAt: "16 Jan 2027, 00:00 CET", notice: "Raised", problem: .amount, error: "A number"),
        ]
    }

    /// The pages whose templates have inverted sections, with every optional nil, every list empty
    /// and every flag false, so that the `{{^x}}` and `{{#empty(x)}}` branches are entered too.
    static var emptySamples: [any PageModel] {
        let entry = EntryItem(
            seq: "7", time: "24 Nov 2026, 10:00:07 CET", timeISO: "2026-11-24T09:00:07.000Z", actor: nil, action: "audit.view",
            outcome: "success", outcomeLabel: "Success", roleLabel: nil, address: nil, subjectShort: nil, details: "", rawDetails: "")
        let event = EventSection(
            authorities: [], reasonValue: "", reasonError: nil, directNonce: nil, twoPerson: false, ownRequests: [], toApprove: [],
            waitingForApproval: "", approvedOwn: [], notice: nil)
        let noCall = RecentPage.Call(id: "c1", startedAt: nil, outcome: nil)
        return [
            SignInPage(csrf: "token", username: nil, notice: nil, error: nil, details: []),
            HomePage(
                teleTANWasHidden: false, teleTANWaiting: false, issueNonce: "nonce", mayIssue: true, event: event,
                links: .init(recent: true, hotline: false, overview: false, audit: false, sessions: false, quota: false)),
            ResultPage(
                groups: [.init(text: "ABC", spelled: "Alfa - Bravo - Charlie")], type: "TEST", healthAuthority: nil, reference: nil,
                callID: nil, validUntil: "24 Nov", validUntilISO: "2026-11-24T10:00:00Z", hideAfterSeconds: 60, hiddenAfterText: "Hidden"),
            EventRequestPage(event: event),
            RecentPage(items: [], notice: nil, statusUnknown: false),
            RecentPage(
                items: [.init(id: "i1", reference: "R-1", type: "TEST", healthAuthority: nil, issuedAt: "10:00", validUntil: "11:00",
                              status: "Redeemed", statusKey: "redeemed", revokeReason: nil, call: noCall, mayRevoke: false)],
                notice: nil, statusUnknown: false),
            RevokePage(
                id: "i1", reference: "R-1", type: "TEST", healthAuthority: nil, issuedAt: "10:00", call: nil,
                reasons: [.init(code: "wrong_person", label: "Wrong person", checked: false)], note: "", maxNote: 80, problem: nil, error: nil),
            HotlineHomePage(openCalls: [], callbacksWaiting: "0 waiting", notice: nil, mayViewOverview: false),
            CallPage(
                callID: "c1", startedAt: "10:00", fromCallback: false, caller: nil, idleNotice: nil, idleSeconds: 1800,
                sayCallback: "We delete your number …", step: .checks,
                checks: [.init(id: "identity", label: "Identity", say: nil, sayOther: nil, required: false, checked: false, missing: false)],
                issueNonce: nil, form: .init(phone: nil, name: nil, errorField: nil), outcomes: [], error: nil, notice: nil,
                repeatWarning: nil, teleTANWaiting: false, otherLanguage: "de", readBack: nil, endedSummary: nil),
            CallbackQueuePage(intro: "The queue", entries: [], closed: [], notice: nil),
            CallbackPage(id: "b1", phone: "0171 234", phoneLink: "tel:+49171234", name: "Caller", queuedAt: "10:00", attempts: "1 of 3",
                         repeatWarning: nil, holdUntil: "10:15"),
            OverviewPage(outcomes: [], totalToday: 0, totalWeek: 0, callbacksWaiting: 0, oldestWait: nil, days: []),
            SearchPage(
                form: .init(actor: "", action: "", outcomes: [], from: "", to: "", address: "", subject: "", showOwnViews: false,
                            invalid: [], teleTANFields: []),
                knownActions: [], filterError: nil, entries: [], filtered: false, olderLink: nil, newerLink: nil, newestLink: nil,
                csvLink: "/admin/audit/export.csv", jsonlLink: "/admin/audit/export.jsonl", lookupError: nil,
                integrity: .init(lastRun: nil, checkpoint: nil), verifyNotice: nil),
            EntryPage(
                entry: entry, requestID: nil, subject: nil, details: [], previousHash: "00", hash: "11", actorLink: nil, subjectLink: nil,
                teleTANLink: nil, previousLink: nil, nextLink: "/admin/audit/entries/8"),
            TeleTANPage(
                found: false, issuedAt: nil, issuedBy: nil, issuanceLink: nil, type: nil, validUntil: nil, status: "Unknown", statusKey: "unknown",
                callLink: nil, entries: [], subjectLink: "/admin/audit?subject=ff"),
            ChartsPage(charts: [], timeZone: "Europe/Berlin"),
            SessionsPage(items: [], notice: nil),
            LockoutsPage(items: [], notice: nil),
            QuotaPage(
                items: [.init(scope: "portal", name: "Whole portal", quota: 1000, extra: 0, limit: 1000, used: 0, left: 1000, how: "Fixed", basis: [])],
                raises: [], options: [], form: .init(scope: "portal"), maxAmount: 100_000, maxReason: 80, resetsAt: "16 Jan",
                notice: nil, problem: nil, error: nil),
        ]
    }
}
