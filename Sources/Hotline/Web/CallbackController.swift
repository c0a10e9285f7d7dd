import AccessControl
import Audit
import FluentKit
import Foundation
import Hummingbird
import PortalWeb
import Storage

/// The shared callback queue: any hotline agent sees it with numbers masked; **Take** gives an
/// entry to one agent, who sees the number, calls, and records the outcome.
struct CallbackController: Sendable {
    let database: PortalDatabase
    let callbacks: Callbacks
    let calls = Calls()
    let history: NumberHistory
    let audit: AuditLog
    let renderer: PageRenderer
    let now: @Sendable () -> Date

    func addRoutes(to routes: DeclaredRoutes) {
        routes.group("/hotline/callbacks", access: .permission(.workHotlineCalls))
            .get(use: queue)
            .post("{id}/take", form: TokenOnlyForm.self, use: take)
            .get("{id}", use: show)
            .post("{id}/outcome", form: OutcomeForm.self, use: outcome)
    }

    struct OutcomeForm: PortalForm {
        let outcome: String?
    }

    @Sendable func queue(_ request: Request, context: PermittedContext) async throws -> Response {
        let notice = request.uri.queryParameters["notice"].map(String.init)
        return try await queuePage(context: context, notice: notice, status: .ok)
    }

    @Sendable func take(_ request: Request, context: PermittedContext, form _: TokenOnlyForm) async throws -> Response {
        let (user, acting) = (context.user, context.acting)
        guard let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)) else { throw HTTPError(.notFound) }
        let time = now()
        let db = database.database(logger: context.logger)
        let result = try await callbacks.take(id, by: user.username, now: time, on: db)
        try await audit.append(AuditEvent(.hotlineCallbackTaken, result == .taken ? .success : .refused, by: acting, subject: "callback:\(id.uuidString.lowercased())",
            details: result == .taken ? [:] : ["reason": result == .takenByOther ? "taken_by_other" : "not_waiting"]), at: time, on: db)
        switch result {
        case .taken: return PageRenderer.redirect(to: "/hotline/callbacks/\(id.uuidString.lowercased())")
        case .takenByOther: return try await queuePage(context: context, notice: "taken_by_other", status: .conflict)
        case .notWaiting: return try await queuePage(context: context, notice: "not_waiting", status: .conflict)
        }
    }

    @Sendable func show(_ request: Request, context: PermittedContext) async throws -> Response {
        let user = context.user
        guard let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)) else { throw HTTPError(.notFound) }
        let time = now()
        let db = database.database(logger: context.logger)
        guard let row = try await callbacks.find(id, on: db) else { throw HTTPError(.notFound) }
        // Only the agent holding it sees the number; for everyone else the queue says why not.
        guard row.holder(now: time, takeTimeout: callbacks.takeTimeout) == user.username,
              row.created_at > time.addingTimeInterval(-callbacks.retention),
              let contact = callbacks.contact(of: row), let phone = PhoneNumber(contact.phone)
        else {
            let notice = !row.isWaiting || row.sealed_contact == nil ? "not_waiting" : "not_taken"
            return try await queuePage(context: context, notice: notice, status: .conflict)
        }
        let language = context.language
        var warning: String?
        if let fingerprint = row.phone_fingerprint, let last = try await history.lastTeleTAN(for: [fingerprint], now: time, on: db) {
            warning = CallController.repeatWarning(last: last, now: time, renderer: renderer, language: language)
        }
        return try renderer.page(CallbackPage(
            row: row, phone: phone, name: contact.name, repeatWarning: warning, callbacks: callbacks, now: time,
            renderer: renderer, language: language
        ), context: context)
    }

    @Sendable func outcome(_ request: Request, context: PermittedContext, form: OutcomeForm) async throws -> Response {
        let (user, acting) = (context.user, context.acting)
        guard let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)) else { throw HTTPError(.notFound) }
        guard let outcome = form.outcome.flatMap(CallbackOutcome.init(rawValue:)) else { throw HTTPError(.badRequest) }
        let time = now()
        let db = database.database(logger: context.logger)
        let subject = "callback:\(id.uuidString.lowercased())"
        let base = AuditEvent(.hotlineCallbackAttempt, .success, by: acting, subject: subject, details: ["result": outcome.rawValue])
        let next: String = try await db.transaction { tx in
            let original = try await callbacks.find(id, on: tx)
            let recorded = try await callbacks.record(outcome, of: id, by: user.username, now: time, on: tx)
            var entry = base
            switch recorded {
            case .notHeld:
                entry.outcome = .refused
                entry.details["reason"] = "not_held"
                try await audit.append(entry, at: time, on: tx)
                return "/hotline/callbacks?notice=not_taken"
            case .requeued(let attempts):
                entry.details["attempts"] = String(attempts)
                try await audit.append(entry, at: time, on: tx)
                return "/hotline/callbacks?notice=no_answer"
            case .closed(let closedAs, let phoneFingerprint):
                entry.details["closed_as"] = closedAs
                entry.details["attempts"] = String((original?.attempts ?? 0) + 1)
                try await audit.append(entry, at: time, on: tx)
                guard outcome == .reached, let original else { return "/hotline/callbacks?notice=\(closedAs)" }
                // The caller is on the line again: a new call, with the first call's answers.
                let first = try await calls.find(original.call_id, on: tx)
                let call = try await calls.start(
                    agent: user.username, at: time, answers: first?.answerMap ?? [:], callbackID: id, phoneFingerprint: phoneFingerprint, on: tx)
                try await audit.append(AuditEvent(.hotlineCallStarted, .success, by: acting, subject: "call:\(call.uuidString.lowercased())",
                    details: ["callback": id.uuidString.lowercased()]), at: time, on: tx)
                return CallController.path(call)
            }
        }
        return PageRenderer.redirect(to: next)
    }

    private func queuePage(context: PermittedContext, notice: String?, status: HTTPResponse.Status) async throws -> Response {
        let user = context.user
        let time = now()
        let db = database.database(logger: context.logger)
        let language = context.language
        var waiting: [CallbackQueuePage.Waiting] = []
        for row in try await callbacks.waiting(now: time, on: db) {
            guard let contact = callbacks.contact(of: row), let phone = PhoneNumber(contact.phone) else { continue }
            var warning: String?
            if let fingerprint = row.phone_fingerprint, let last = try await history.lastTeleTAN(for: [fingerprint], now: time, on: db) {
                warning = CallController.repeatWarning(last: last, now: time, renderer: renderer, language: language)
            }
            waiting.append(.init(row: row, phone: phone, repeatWarning: warning))
        }
        let closed = try await callbacks.recentlyClosed(now: time, on: db)
        return try renderer.page(CallbackQueuePage(
            waiting: waiting, closed: closed, notice: notice, agent: user.username, callbacks: callbacks, now: time,
            renderer: renderer, language: language
        ), status: status, context: context)
    }
}
