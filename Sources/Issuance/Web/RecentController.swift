import AccessControl
import Audit
import FluentKit
import Foundation
import Hummingbird
import PortalWeb
import Storage
import Verification

/// "My recent teleTANs": what the signed-in user issued in the last seven days with its status
/// at the verification service and, for a hotline teleTAN, the call it belongs to; **Revoke** for
/// one not redeemed yet (read to the wrong person) leads to a page that asks for confirmation and
/// a reason. Only the issuer sees their own.
struct RecentController: Sendable {
    let database: PortalDatabase
    let issued = IssuedTeleTANs()
    let service: any VerificationService
    let revoker: TeleTANRevoker
    /// The hotline's calls, for the rows of hotline teleTANs (nil: none are looked up).
    let calls: CallSummaries?
    let renderer: PageRenderer
    let now: @Sendable () -> Date

    func addRoutes(to routes: DeclaredRoutes) {
        routes.group("/teletan/recent", access: .permission(.seeOwnTeleTANs))
            .get(use: list)
            .get("{id}/revoke", use: confirmRevoke)
            .post("{id}/revoke", form: RevokeForm.self, use: revoke)
    }

    struct RevokeForm: PortalForm {
        /// A ``RevocationReason/Code`` raw value.
        let reason: String?
        let note: String?
    }

    @Sendable func list(_ request: Request, context: PermittedContext) async throws -> Response {
        let user = context.user
        let db = database.database(logger: context.logger)
        let time = now()
        let rows = try await issued.recent(issuedBy: user.username, now: time, on: db)
        let references = rows.compactMap(\.reference)
        let statuses = references.isEmpty ? nil
            : await service.statuses(of: references, issuer: Issuer(username: user.username, roles: user.roles.cwaRoles), within: db)
        let callIDs = Array(Set(rows.compactMap { $0.call_id.flatMap(UUID.init(uuidString:)) }))
        var summaries: [UUID: CallSummary] = [:]
        if !callIDs.isEmpty, let calls { summaries = try await calls(callIDs, db) }
        let notice = renderer.notice(
            request, parameter: "revoked", allowed: ["revoked", "already_redeemed", "already_revoked", "expired", "not_found", "unavailable"],
            prefix: "recent_result_", in: context.language)
        return try renderer.page(RecentPage(
            rows: rows, statuses: statuses, calls: summaries, notice: notice, renderer: renderer, language: context.language), context: context)
    }

    /// The confirmation step (a page of its own, so it works without JavaScript).
    @Sendable func confirmRevoke(_ request: Request, context: PermittedContext) async throws -> Response {
        let user = context.user
        let db = database.database(logger: context.logger)
        guard let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)),
              let row = try await issued.find(id, issuedBy: user.username, on: db)
        else { throw HTTPError(.notFound) }
        if row.revoked_at != nil { return PageRenderer.redirect(to: "/teletan/recent?revoked=already_revoked") }
        return try renderer.page(try await revokePage(row, reason: nil, note: "", problem: nil, context: context, db: db), context: context)
    }

    @Sendable func revoke(_ request: Request, context: PermittedContext, form: RevokeForm) async throws -> Response {
        let (user, acting) = (context.user, context.acting)
        let db = database.database(logger: context.logger)
        guard let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)),
              let row = try await issued.find(id, issuedBy: user.username, on: db)
        else { throw HTTPError(.notFound) }
        let code = form.reason.flatMap(RevocationReason.Code.init(rawValue:))
        var note: String?
        var error: RevokePage.Problem?
        switch ShortText.check(form.note) {
        case .success(let text): note = text
        case .failure(let refused) where refused.problem == .empty: note = nil
        case .failure(let refused): error = .note(refused.problem)
        }
        if code == nil { error = .reason }
        guard let code, error == nil else {
            // The page again with what was chosen and typed, and what is missing or wrong.
            return try renderer.page(
                try await revokePage(row, reason: code, note: form.note ?? "", problem: error, context: context, db: db),
                status: .badRequest, context: context)
        }
        let result = try await revoker.revoke(row, by: acting, reason: RevocationReason(code: code, note: note), at: now(), on: db)
        return PageRenderer.redirect(to: "/teletan/recent?revoked=\(result)")
    }

    private func revokePage(
        _ row: IssuedTeleTANs.Row, reason: RevocationReason.Code?, note: String, problem: RevokePage.Problem?,
        context: PermittedContext, db: any Database
    ) async throws -> RevokePage {
        var summaries: [UUID: CallSummary] = [:]
        if let id = row.call_id.flatMap(UUID.init(uuidString:)), let calls { summaries = try await calls([id], db) }
        return RevokePage(
            row: row, reason: reason, note: note, problem: problem, calls: summaries, renderer: renderer, language: context.language)
    }
}

/// "My recent teleTANs".
struct RecentPage: PageModel {
    struct Item: TemplateValues {
        let id: String
        let reference: String
        let type: String
        let healthAuthority: String?
        let issuedAt: String
        let validUntil: String
        let status: String
        let statusKey: String
        /// Why it was revoked (the reason's label and the note), for a revoked one.
        let revokeReason: String?
        /// The hotline call it was issued in.
        let call: Call?
        let mayRevoke: Bool
    }

    /// A hotline call: its page, when it started and how it ended (nil once its record is gone).
    struct Call: TemplateValues {
        let id: String
        let startedAt: String?
        let outcome: String?
    }

    static let template = "issuance/recent"
    let titleKey = "recent_title"
    let items: [Item]
    let notice: String?
    /// The verification service cannot tell statuses (a server without the endpoint, or down).
    let statusUnknown: Bool
}

/// "Revoke this teleTAN?": which one, why (a choice and an optional note), confirm or go back.
struct RevokePage: PageModel {
    enum Problem: Equatable, Encodable {
        case reason
        case note(ShortText.Problem)
    }

    struct Reason: TemplateValues {
        let code: String
        let label: String
        let checked: Bool
    }

    static let template = "issuance/revoke"
    let titleKey = "revoke_title"
    let id: String
    let reference: String
    let type: String
    let healthAuthority: String?
    let issuedAt: String
    let call: RecentPage.Call?
    let reasons: [Reason]
    let note: String
    let maxNote: Int
    /// What is missing or wrong in the form, and its text.
    let problem: Problem?
    let error: String?

    func derivedValue(named name: String) -> any TemplateValue {
        switch name {
        case "errorOnReason": problem == .reason
        case "errorOnNote": problem != nil && problem != .reason
        default: .undeclared
        }
    }
}

// Page models are encoded for their templates (`TemplateValues`), the revoke form's problem too.
extension ShortText.Problem: Encodable {}
