import AccessControl
import Audit
import Foundation
import Hummingbird
import PortalWeb
import Storage
import Verification

/// "My recent teleTANs": what the signed-in user issued in the last seven days with its status
/// at the verification service, and **Revoke** for one not redeemed yet (read to the wrong
/// person). Only the issuer sees their own.
struct RecentController: Sendable {
    let database: PortalDatabase
    let csrf: CSRF
    let issued = IssuedTeleTANs()
    let service: any VerificationService
    let revoker: TeleTANRevoker
    let renderer: PageRenderer
    let now: @Sendable () -> Date

    func addRoutes(to routes: DeclaredRoutes) {
        routes.group("/teletan/recent", access: .permission(.seeOwnTeleTANs))
            .get(use: list)
            .post("{id}/revoke", use: revoke)
    }

    struct RevokeForm: Decodable {
        let csrf: String
    }

    @Sendable func list(_ request: Request, context: PortalRequestContext) async throws -> Response {
        guard let user = context.identity else { throw SignInRequired() }
        let db = database.database(logger: context.logger)
        let time = now()
        let rows = try await issued.recent(issuedBy: user.username, now: time, on: db)
        let references = rows.compactMap(\.reference)
        let statuses = references.isEmpty ? nil
            : await service.statuses(of: references, issuer: Issuer(username: user.username, roles: user.roles.cwaRoles), within: db)
        let language = context.language
        let items = rows.map { row -> RecentPage.Item in
            let status: TeleTANStatus? = row.revoked_at != nil ? .revoked : row.reference.flatMap { statuses?[$0] }
            return RecentPage.Item(
                id: row.id.uuidString.lowercased(),
                reference: Self.reference(row.id),
                type: row.type,
                healthAuthority: row.health_authority,
                issuedAt: renderer.dateTime(row.issued_at, in: language),
                validUntil: renderer.dateTime(row.valid_until, in: language),
                status: renderer.text("recent_status_\(status?.rawValue ?? "unknown")", in: language),
                statusKey: status?.rawValue ?? "unknown",
                mayRevoke: status == .unused)
        }
        let notice = renderer.notice(
            request, parameter: "revoked", allowed: ["revoked", "already_redeemed", "already_revoked", "expired", "not_found", "unavailable"],
            prefix: "recent_result_", in: language)
        return try renderer.page(RecentPage(
            items: items, hasItems: !items.isEmpty, notice: notice,
            statusUnknown: !rows.isEmpty && (statuses == nil || references.count < rows.count)), context: context)
    }

    @Sendable func revoke(_ request: Request, context: PortalRequestContext) async throws -> Response {
        guard let user = context.identity, let acting = context.actingUser(for: .seeOwnTeleTANs) else { throw SignInRequired() }
        let form = try await request.decode(as: RevokeForm.self, context: context)
        try csrf.require(form.csrf, for: user)
        let db = database.database(logger: context.logger)
        guard let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)),
              let row = try await issued.find(id, issuedBy: user.username, on: db)
        else { throw HTTPError(.notFound) }
        let result = try await revoker.revoke(row, by: acting, at: now(), on: db)
        return PageRenderer.redirect(to: "/teletan/recent?revoked=\(result)")
    }

    /// A short name for the teleTAN that says nothing about it: the first eight characters of
    /// its random row id.
    static func reference(_ id: UUID) -> String {
        let text = id.uuidString.uppercased()
        return "\(text.prefix(4))-\(text.dropFirst(4).prefix(4))"
    }
}

/// "My recent teleTANs".
struct RecentPage: PageModel {
    struct Item: Sendable {
        let id: String
        let reference: String
        let type: String
        let healthAuthority: String?
        let issuedAt: String
        let validUntil: String
        let status: String
        let statusKey: String
        let mayRevoke: Bool
    }

    static let template = "issuance/recent"
    let titleKey = "recent_title"
    let items: [Item]
    let hasItems: Bool
    let notice: String?
    /// The verification service cannot tell statuses (a server without the endpoint, or down).
    let statusUnknown: Bool
}
