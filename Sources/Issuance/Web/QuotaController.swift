import AccessControl
import Audit
import Foundation
import HTTPTypes
import Hummingbird
import PortalWeb
import Storage

/// `/admin/quota`: today's daily quotas (the portal's and each health authority's), what is left,
/// the days each was predicted from, and **Raise quota**: more teleTANs for today, until the
/// authority's midnight, with a reason (kept beside the raise, not in the audit trail).
struct QuotaController: Sendable {
    let database: PortalDatabase
    let quotas: DailyQuotas
    let authorities: HealthAuthorities
    let audit: AuditLog
    let renderer: PageRenderer
    let now: @Sendable () -> Date

    func addRoutes(to routes: DeclaredRoutes) {
        routes.group("/admin/quota", access: .permission(.manageDailyQuota))
            .get(use: show)
            .post(form: RaiseForm.self, use: raise)
    }

    struct RaiseForm: PortalForm {
        let scope: String?
        let amount: String?
        let reason: String?
    }

    @Sendable func show(_ request: Request, context: PermittedContext) async throws -> Response {
        let time = now()
        let db = database.database(logger: context.logger)
        if request.method != .head {
            // Opening an admin page is audited, as the audit review's pages are.
            try await audit.append(AuditEvent(.auditView, .success, by: context.acting, details: ["page": "quota"]), at: time, on: db)
        }
        let notice = renderer.notice(request, parameter: "result", allowed: ["raised"], prefix: "quota_notice_", in: context.language)
        return try await page(form: QuotaPage.Form(scope: DailyQuotas.portalScope), notice: notice, context: context)
    }

    @Sendable func raise(_ request: Request, context: PermittedContext, form: RaiseForm) async throws -> Response {
        let typed = QuotaPage.Form(scope: form.scope ?? "", amount: form.amount ?? "", reason: form.reason ?? "")
        let amount: Int
        let reason: String
        switch Self.check(form, scopes: quotas.scopes) {
        case .failure(let problem):
            return try await page(form: typed, problem: problem, status: .badRequest, context: context)
        case .success(let checked):
            (amount, reason) = checked
        }
        let scope = typed.scope
        let time = now()
        try await database.database(logger: context.logger).transaction { tx in
            let row = try await quotas.raise(scope, by: amount, reason: reason, raisedBy: context.user.username, at: time, on: tx)
            // The reason is free text: it stays with the raise (on this page), not in the trail.
            try await audit.append(AuditEvent(.adminQuotaRaise, .success, by: context.acting, subject: "quota:\(scope)", details: [
                "amount": String(amount), "day": row.day, "limit": String(row.limit),
            ]), at: time, on: tx)
        }
        return PageRenderer.redirect(to: "/admin/quota?result=raised")
    }

    /// The number and reason of a raise, or what is wrong with the form.
    static func check(_ form: RaiseForm, scopes: [String]) -> Result<(Int, String), QuotaPage.Problem> {
        guard let scope = form.scope, scopes.contains(scope) else { return .failure(.scope) }
        let typed = (form.amount ?? "").trimmingCharacters(in: .whitespaces)
        guard typed.count <= 7, let amount = Int(typed), (1...DailyQuotas.largestRaise).contains(amount) else {
            return .failure(.amount)
        }
        switch ShortText.check(form.reason) {
        case .success(let reason): return .success((amount, reason))
        case .failure(let refused): return .failure(.reason(refused.problem))
        }
    }

    private func page(
        form: QuotaPage.Form, problem: QuotaPage.Problem? = nil, notice: String? = nil, status: HTTPResponse.Status = .ok,
        context: PermittedContext
    ) async throws -> Response {
        let time = now()
        let db = database.database(logger: context.logger)
        let rows = try await quotas.prepare(at: time, on: db)
        let raises = try await quotas.raises(at: time, on: db)
        return try renderer.page(QuotaPage(
            rows: rows, raises: raises, authorities: authorities, form: form, problem: problem, notice: notice,
            resetsAt: quotas.day(at: time).end(in: renderer.timeZone), renderer: renderer, language: context.language
        ), status: status, context: context)
    }
}

extension AuditAction {
    /// An administrator opened an admin page (the audit review's name for it).
    static let auditView: AuditAction = "audit.view"
    /// An administrator raised today's daily quota.
    static let adminQuotaRaise: AuditAction = "admin.quota.raise"
}
