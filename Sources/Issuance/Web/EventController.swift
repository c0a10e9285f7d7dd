import AccessControl
import Audit
import FluentKit
import Foundation
import Hummingbird
import PortalWeb
import Storage
import TeleTAN

/// EVENT teleTANs for a health authority: issued at once, or under the four-eyes rule
/// (`--event-approval two-person`) requested by one event officer, approved by another, then
/// issued by the requester.
struct EventController: Sendable {
    let database: PortalDatabase
    let issuer: TeleTANIssuer
    let nonces: FormNonces
    let requests = EventRequests()
    let authorities: HealthAuthorities
    let twoPerson: Bool
    let audit: AuditLog
    let renderer: PageRenderer
    let now: @Sendable () -> Date

    func addRoutes(to routes: DeclaredRoutes) {
        routes.group("/teletan/event", access: .permission(.issueEventTeleTAN))
            .post(form: IssueForm.self, use: issueDirectly)
            .post("requests", form: RequestForm.self, use: request)
            .post("requests/{id}/approve", form: TokenOnlyForm.self, use: approve)
            .post("requests/{id}/decline", form: TokenOnlyForm.self, use: decline)
            .post("requests/{id}/issue", form: IssueForm.self, use: issueApproved)
            .post("requests/{id}/withdraw", form: TokenOnlyForm.self, use: withdraw)
    }

    struct IssueForm: NoncedForm {
        var nonce: FormNonce
        let authority: String?
    }

    struct RequestForm: PortalForm {
        let authority: String?
        /// The reason or case reference the approver sees (required, short, no personal data).
        let reason: String?
    }

    /// The start page's EVENT section for `user`.
    func section(for user: SignedInUser, waiting: Bool, notice: String?, context: some SignedInRequestContext) async throws -> EventSection {
        let time = now()
        let db = database.database(logger: context.logger)
        var own: [EventRequests.Row] = []
        var toApprove: [EventRequests.Row] = []
        var waitingCount = 0
        if twoPerson {
            own = try await requests.own(user.username, now: time, on: db)
            toApprove = try await requests.awaitingDecision(by: user.username, now: time, on: db)
            waitingCount = try await requests.countAwaitingDecision(by: user.username, now: time, on: db)
        }
        return EventSection(
            authorities: authorities, twoPerson: twoPerson,
            directNonce: !twoPerson && !waiting ? nonces.make(sessionHash: user.sessionHash, now: time) : nil,
            own: own, toApprove: toApprove, waitingCount: waitingCount, teleTANWaiting: waiting,
            makeNonce: { nonces.make(sessionHash: user.sessionHash, now: time) }, notice: notice, at: time,
            renderer: renderer, language: context.language)
    }

    @Sendable func issueDirectly(_ request: Request, context: PermittedContext, form: IssueForm) async throws -> Response {
        // Under the four-eyes rule nothing is issued without an approval.
        guard !twoPerson else { throw HTTPError(.forbidden, message: "direct EVENT issuance is off under the two-person rule") }
        guard let authority = form.authority.flatMap(authorities.find) else { throw UnknownHealthAuthority() }
        let purpose = IssuancePurpose(auditDetails: ["health_authority": authority.id], healthAuthorityName: authority.name)
        switch try await issuer.issue(type: .event, by: context.acting, nonce: form.nonce, for: purpose) {
        case .formInvalid: throw FormExpired()
        case .issued, .formAlreadyUsed, .teleTANWaiting, .refused: break
        }
        return PageRenderer.redirect(to: "/teletan/result")
    }

    @Sendable func request(_ request: Request, context: PermittedContext, form: RequestForm) async throws -> Response {
        let (user, acting) = (context.user, context.acting)
        guard twoPerson else { throw HTTPError(.notFound) }
        guard let authority = form.authority.flatMap(authorities.find) else { throw UnknownHealthAuthority() }
        let reason: String
        switch ShortText.check(form.reason) {
        case .success(let text): reason = text
        case .failure(let refused):
            // The form again, with what was typed and what is wrong with it.
            return try renderer.page(EventRequestPage(event: EventSection(
                refused: refused.problem, reason: form.reason ?? "", authority: authority, of: authorities,
                renderer: renderer, language: context.language)), status: .badRequest, context: context)
        }
        let time = now()
        try await database.database(logger: context.logger).transaction { tx in
            let id = try await requests.create(requestedBy: user.username, healthAuthority: authority.id, reason: reason, at: time, on: tx)
            // The reason stays with the request (shown to the approver, deleted with it after a
            // week), not in the append-only trail: it is free text (docs/security.md).
            try await audit.append(event(.eventApprovalRequested, .success, acting, request: id, ["health_authority": authority.id]), at: time, on: tx)
        }
        return PageRenderer.redirect(to: "/?event=requested")
    }

    @Sendable func approve(_ request: Request, context: PermittedContext, form _: TokenOnlyForm) async throws -> Response {
        try await decide(request, context: context, approve: true)
    }

    @Sendable func decline(_ request: Request, context: PermittedContext, form _: TokenOnlyForm) async throws -> Response {
        try await decide(request, context: context, approve: false)
    }

    private func decide(_ request: Request, context: PermittedContext, approve: Bool) async throws -> Response {
        let (user, acting) = (context.user, context.acting)
        guard twoPerson, let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)) else { throw HTTPError(.notFound) }
        let time = now()
        let action: AuditAction = approve ? .eventApprovalGiven : .eventApprovalDeclined
        let decision: EventRequests.Decision = try await database.database(logger: context.logger).transaction { tx in
            let decision = try await requests.decide(id, approve: approve, by: user.username, at: time, on: tx)
            let requester = try await requests.find(id, on: tx)
            var details = ["requested_by": requester?.requested_by ?? "", "health_authority": requester?.health_authority ?? ""]
            switch decision {
            case .done: break
            case .ownRequest: details["reason"] = "own_request"
            case .notPending: details["reason"] = "not_pending"
            }
            if requester == nil { details = ["reason": "unknown_request"] }
            try await audit.append(event(action, decision == .done ? .success : .refused, acting, request: id, details), at: time, on: tx)
            return decision
        }
        switch decision {
        case .done: return PageRenderer.redirect(to: approve ? "/?event=approved" : "/?event=declined")
        case .ownRequest: throw OwnEventRequest()
        case .notPending: return PageRenderer.redirect(to: "/?event=not_pending")
        }
    }

    @Sendable func issueApproved(_ request: Request, context: PermittedContext, form: IssueForm) async throws -> Response {
        let (user, acting) = (context.user, context.acting)
        guard twoPerson, let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)) else { throw HTTPError(.notFound) }
        let db = database.database(logger: context.logger)
        guard let row = try await requests.find(id, on: db), row.requested_by == user.username else { throw HTTPError(.notFound) }
        let authority = authorities.find(row.health_authority)
        let time = now()
        // A second submit of the same Issue (a double click without JavaScript, Back and submit):
        // say so, rather than that the request is not approved.
        if row.state == .issued { return try await afterRepeatedIssue(user, db: db) }
        // Checked again in the issuing transaction; checked here too so that a remote server is
        // not asked for a teleTAN that would be refused.
        guard row.isUsableApproval(at: time) else {
            return PageRenderer.redirect(to: "/?event=not_approved")
        }
        let purpose = IssuancePurpose(
            auditDetails: ["health_authority": row.health_authority, "approved_by": row.decided_by ?? "", "request": id.uuidString.lowercased()],
            healthAuthorityName: authority?.name ?? row.health_authority,
            onIssued: { [requests] _, tx in
                guard try await requests.markIssued(id, requestedBy: user.username, at: time, on: tx) else {
                    throw IssuanceRefusal(reason: "not_approved")
                }
            })
        switch try await issuer.issue(type: .event, by: acting, nonce: form.nonce, for: purpose) {
        case .formInvalid: throw FormExpired()
        case .issued, .teleTANWaiting: return PageRenderer.redirect(to: "/teletan/result")
        case .refused, .formAlreadyUsed:
            // Two submits at once: the other one issued it (or is about to show it).
            if try await requests.find(id, on: db)?.state == .issued { return try await afterRepeatedIssue(user, db: db) }
            return PageRenderer.redirect(to: "/?event=not_approved")
        }
    }

    /// The request was issued already: the result page while its teleTAN still waits to be shown
    /// (the first submit's page was not seen), else the start page saying it was issued.
    private func afterRepeatedIssue(_ user: SignedInUser, db: any Database) async throws -> Response {
        try await issuer.displays.isWaiting(sessionHash: user.sessionHash, now: now(), on: db)
            ? PageRenderer.redirect(to: "/teletan/result")
            : PageRenderer.redirect(to: "/?event=already_issued")
    }

    @Sendable func withdraw(_ request: Request, context: PermittedContext, form _: TokenOnlyForm) async throws -> Response {
        let (user, acting) = (context.user, context.acting)
        guard twoPerson, let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)) else { throw HTTPError(.notFound) }
        let time = now()
        let withdrawn: Bool = try await database.database(logger: context.logger).transaction { tx in
            let done = try await requests.withdraw(id, by: user.username, at: time, on: tx)
            let row = try await requests.find(id, on: tx)
            var details = ["health_authority": row?.health_authority ?? ""]
            if !done { details["reason"] = row == nil || row?.requested_by != user.username ? "unknown_request" : "not_pending" }
            try await audit.append(event(.eventApprovalWithdrawn, done ? .success : .refused, acting, request: id, details), at: time, on: tx)
            return done
        }
        return PageRenderer.redirect(to: withdrawn ? "/?event=withdrawn" : "/?event=not_pending")
    }

    private func event(
        _ action: AuditAction, _ outcome: AuditEvent.Outcome, _ user: ActingUser, request id: UUID, _ details: [String: String]
    ) -> AuditEvent {
        AuditEvent(action, outcome, by: user, subject: "event-request:\(id.uuidString.lowercased())", details: details)
    }
}

extension AuditAction {
    /// The requester took back an EVENT request before it was issued.
    static let eventApprovalWithdrawn: AuditAction = "event.approval.withdrawn"
}

/// The form named no health authority from the configured list.
struct UnknownHealthAuthority: UserFacingError {
    var status: HTTPResponse.Status { .badRequest }
    var retryAfterSeconds: Int? { nil }
    func message(_ renderer: PageRenderer, in language: Language) -> String? {
        renderer.text("event_unknown_authority", in: language)
    }
}

/// An event officer tried to approve (or decline) their own request.
struct OwnEventRequest: UserFacingError {
    var status: HTTPResponse.Status { .forbidden }
    var retryAfterSeconds: Int? { nil }
    var logReason: String { "an event officer may not approve or decline their own request" }
    func message(_ renderer: PageRenderer, in language: Language) -> String? {
        renderer.text("event_own_request", in: language)
    }
}
