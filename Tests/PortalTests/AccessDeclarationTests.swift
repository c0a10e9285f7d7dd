import AccessControl
import Audit
import FluentKit
import Foundation
import HTTPTypes
import Hummingbird
import TestSupport
import XCTest
@testable import Portal
@testable import PortalWeb

/// Every route against every role, with the expectation taken from the route's access
/// declaration: a route the router has but no group declared fails here.
final class AccessDeclarationTests: XCTestCase {
    enum Who: CaseIterable {
        case anonymous, officer, hotline, event, admin, norole

        var account: Account? {
            switch self {
            case .anonymous: nil
            case .officer: .officer
            case .hotline: .hotline
            case .event: .event
            case .admin: .admin
            case .norole: .norole
            }
        }
    }

    func testEveryDeclaredRouteAgainstEveryRole() async throws {
        try await PortalHarness.run(configure: { $0.teleTANMinimumInterval = .zero }) { portal in
            let (router, routes) = portal.portal.makeRoutes()
            XCTAssertEqual(Self.undeclared(router: router, routes: routes), [], "routes without an access declaration")
            XCTAssertGreaterThan(routes.declarations.count, 10)
            for declaration in routes.declarations {
                for who in Who.allCases {
                    let label = "\(who) \(declaration.method) \(declaration.path) (\(declaration.access))"
                    var browser = portal.browser()
                    if let account = who.account { browser = try await portal.signedIn(account) }
                    let csrf = try await browser.get("/").hidden("csrf") ?? "x"
                    let deniedBefore = try await portal.auditActions("access.denied").count
                    let path = Self.concrete(declaration.path)
                    let page = switch declaration.method {
                    case .get: try await browser.get(path)
                    case .post: try await browser.post(path, ["csrf": csrf, "nonce": "x"])
                    default: try await browser.send(path, method: declaration.method, body: nil, headers: [:])
                    }
                    let denied = try await portal.auditActions("access.denied").dropFirst(deniedBefore)
                    let roles = who.account?.roles
                    switch (declaration.access.admits(roles), roles) {
                    case (false, nil):
                        XCTAssertEqual(page.status, .seeOther, label)
                        XCTAssertEqual(page.location, "/signin", label)
                        XCTAssertTrue(denied.isEmpty, label)
                    case (false, _?):
                        XCTAssertEqual(page.status, .forbidden, label)
                        XCTAssertTrue(page.body.contains("Not allowed"), label)
                        XCTAssertEqual(denied.map(\.actor), [who.account?.rawValue], "the refusal is audited: \(label)")
                        XCTAssertTrue(denied.first?.details.contains(#""path":"\#(path)""#) ?? false, label)
                    case (true, _):
                        XCTAssertTrue(denied.isEmpty, label)
                        XCTAssertFalse(page.status == .seeOther && page.location == "/signin", label)
                        XCTAssertNotEqual(page.status, .internalServerError, label)
                    }
                }
            }
        }
    }

    /// The coverage check itself: a route added to the router without a declaration is found.
    func testARouteWithoutADeclarationIsFound() async throws {
        try await PortalHarness.run { portal in
            let (router, routes) = portal.portal.makeRoutes()
            router.get("/undeclared") { _, _ in "open to all" }
            XCTAssertEqual(Self.undeclared(router: router, routes: routes), ["GET /undeclared"])
        }
    }

    /// The permission table: what each role may do, and that a permission no role holds admits nobody.
    func testThePermissionTable() {
        XCTAssertEqual(Permission.issueTestTeleTAN.roles, [.officer], "hotline agents issue only within a call")
        XCTAssertEqual(Permission.seeOwnTeleTANs.roles, [.officer, .hotline, .event])
        XCTAssertEqual(Permission.viewHotlineOverview.roles, [.hotline, .admin])
        XCTAssertEqual(Set<Role>([.hotline]).cwaRoles, ["c19hotline"], "a call's teleTAN is a TEST teleTAN")
        XCTAssertEqual(Permission.issueEventTeleTAN.roles, [.event])
        XCTAssertEqual(Permission.workHotlineCalls.roles, [.hotline])
        XCTAssertEqual(Permission.reviewAuditTrail.roles, [.admin])
        XCTAssertEqual(Permission.manageSessionsAndLockouts.roles, [.admin])
        XCTAssertTrue(Access.public.admits(nil))
        XCTAssertFalse(Access.signedIn.admits(nil))
        XCTAssertTrue(Access.signedIn.admits([]))
        XCTAssertFalse(Access.permission(.reviewAuditTrail).admits([.officer, .hotline, .event]))
        XCTAssertEqual(Set<Role>([.hotline, .officer]).acting(for: .issueTestTeleTAN), .officer)
        XCTAssertEqual(Set<Role>([.hotline, .event]).cwaRoles, ["c19hotline", "c19hotline_event"])
    }

    /// "METHOD /path" of every route the router has (HEAD answers of GET routes aside, which the
    /// router makes itself) that no group declared.
    static func undeclared(router: Router<PortalRequestContext>, routes: DeclaredRoutes) -> [String] {
        let declared = Set(routes.declarations.map { "\($0.method.rawValue) \($0.path)" })
        return router.routes.map { "\($0.method.rawValue) \($0.path.description)" }.filter { !declared.contains($0) }.sorted()
    }

    /// A path for the route template: `{name}` stands for one segment.
    static func concrete(_ template: String) -> String {
        template.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("{") ? "en" : String($0) }.joined(separator: "/")
    }
}
