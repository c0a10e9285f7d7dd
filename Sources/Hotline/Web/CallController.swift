import AccessControl
import Audit
import FluentKit
import Foundation
import Hummingbird
import Issuance
import PortalWeb
import Storage
import TeleTAN

/// A hotline call: the script with its checks, then one of **Issue teleTAN** (every required
/// check ticked, checked on the server by ``CallIssuance``), **Call back later** (number and name) or
/// **End call**; after a teleTAN, the read-back and "I have passed it on".
struct CallController: Sendable {
    let database: PortalDatabase
    let checks: HotlineChecks
    let issuing: CallIssuance
    let nonces: FormNonces
    let calls = Calls()
    let callbacks: Callbacks
    let callbackNumbers: CallbackNumberPolicy
    let vault: ContactVault
    let history: NumberHistory
    let readBack: ReadBack
    let readBackNotes: ReadBackNotes
    /// The session's idle timeout: the page says when an idle session would end.
    let idleTimeout: Duration
    let displays: PendingDisplays
    let audit: AuditLog
    let renderer: PageRenderer
    let now: @Sendable () -> Date

    func addRoutes(to routes: DeclaredRoutes) {
        routes.group("/hotline", access: .permission(.workHotlineCalls))
            .get(use: home)
            .post("calls", form: TokenOnlyForm.self, use: start)
            .get("calls/{id}", use: show)
            .post("calls/{id}/issue", form: CallForm.self, use: issue)
            .post("calls/{id}/callback", form: CallForm.self, use: callBackLater)
            .post("calls/{id}/end", form: CallForm.self, use: end)
            .post("calls/{id}/read-back", form: ReadBackForm.self, use: checkReadBack)
            .post("calls/{id}/passed-on", form: TokenOnlyForm.self, use: passedOn)
    }

    /// The call page's one form: the checks go with whichever button was pressed.
    struct CallForm: NoncedForm {
        var nonce: FormNonce?
        /// The ticked checks' ids (`checks[]`).
        let checks: [String]?
        let phone: String?
        let name: String?
        let outcome: String?
        /// Set by the page's default button, which Enter in any field presses: what the agent
        /// meant is worked out from what they typed, never "Issue teleTAN".
        let enter: String?
    }

    struct ReadBackForm: PortalForm {
        let readBack: String?
        enum CodingKeys: String, CodingKey { case readBack = "read_back" }
    }

    // MARK: - Pages

    @Sendable func home(_ request: Request, context: PermittedContext) async throws -> Response {
        let user = context.user
        let db = database.database(logger: context.logger)
        let open = try await calls.open(of: user.username, on: db)
        let waiting = try await callbacks.waitingCount(now: now(), on: db)
        let done = request.uri.queryParameters["done"].map(String.init)
        return try renderer.page(HotlineHomePage(
            openCalls: open, callbacksWaiting: waiting.count, done: done, retention: retentionText(context.language),
            mayViewOverview: user.may(.viewHotlineOverview), renderer: renderer, language: context.language
        ), context: context)
    }

    @Sendable func start(_ request: Request, context: PermittedContext, form _: TokenOnlyForm) async throws -> Response {
        let (user, acting) = (context.user, context.acting)
        let time = now()
        let id = try await database.database(logger: context.logger).transaction { tx in
            let id = try await calls.start(agent: user.username, at: time, answers: answers([]), on: tx)
            try await audit.append(event(.hotlineCallStarted, .success, acting, call: id), at: time, on: tx)
            return id
        }
        return PageRenderer.redirect(to: Self.path(id))
    }

    @Sendable func show(_ request: Request, context: PermittedContext) async throws -> Response {
        let (user, call) = try await ownCall(context)
        // The last read-back's result, shown once (a HEAD leaves it).
        var result: ReadBack.Result?
        if call.readback_sealed != nil, request.method == .get,
           let sealed = try await calls.takeReadBackResult(of: call.id, agent: user.username, on: database.database(logger: context.logger)) {
            result = readBackNotes.open(sealed, for: call.id)
        }
        // The result page's display time ran out and sent the agent back here.
        let hidden = request.uri.queryParameters["hidden"] != nil && call.isOpen && call.teletan_fingerprint != nil
        return try await page(
            for: call, user: user, context: context,
            message: CallMessage(notice: hidden ? renderer.text("hotline_notice_teletan_hidden", in: context.language) : nil),
            readBackResult: result)
    }

    // MARK: - Actions

    @Sendable func issue(_ request: Request, context: PermittedContext, form: CallForm) async throws -> Response {
        try await withOpenCall(form, context) { action in
            let outcome: CallIssuance.Outcome
            do {
                outcome = try await issuing.issue(
                    in: action.call, ticked: action.ticked, by: action.acting, nonce: action.form.nonce, at: action.time, on: action.db)
            } catch IssuanceError.dailyQuotaReached {
                // The call page again with what the agent typed and ticked (the refusal is audited):
                // once an administrator raises the quota, Issue teleTAN works from here.
                return try await action.page(error: renderer.text("error_429_daily_quota", in: context.language), status: .tooManyRequests)
            }
            switch outcome {
            case .checksMissing(let missing):
                return try await action.page(error: renderer.text("hotline_error_required", in: context.language), missing: Set(missing))
            case .issuer(.formInvalid): throw FormExpired()
            case .issuer(.refused): return PageRenderer.redirect(to: Self.path(action.call.id))
            case .issuer(.issued), .issuer(.formAlreadyUsed), .issuer(.teleTANWaiting): return PageRenderer.redirect(to: "/teletan/result")
            }
        }
    }

    @Sendable func callBackLater(_ request: Request, context: PermittedContext, form: CallForm) async throws -> Response {
        try await withOpenCall(form, context) { action in
            let (call, form, acting, time) = (action.call, action.form, action.acting, action.time)
            let typedPhone = form.phone?.trimmingCharacters(in: .whitespaces) ?? ""
            let typedName = form.name?.trimmingCharacters(in: .whitespaces) ?? ""
            // Enter with nothing typed for a callback: the checks are saved, nothing else happens.
            if form.enter != nil, typedPhone.isEmpty, typedName.isEmpty {
                return try await action.page(notice: renderer.text("hotline_notice_enter", in: context.language))
            }
            guard let phone = PhoneNumber(typedPhone) else {
                return try await action.page(error: renderer.text("hotline_error_phone", in: context.language), field: "phone")
            }
            // A real number the authority must not call (premium rate, shared cost, abroad ...).
            guard callbackNumbers.allows(phone) else {
                let key = callbackNumbers.isStandard ? "hotline_error_phone_not_allowed" : "hotline_error_phone_not_allowed_configured"
                return try await action.page(error: renderer.text(key, in: context.language), field: "phone")
            }
            guard let name = PersonName.validated(typedName) else {
                let problem = PersonName.problem(typedName) ?? .empty
                return try await action.page(error: renderer.text("hotline_error_name_\(problem.rawValue)", in: context.language), field: "name")
            }
            let phoneFingerprint = vault.fingerprint(of: phone)
            let queued: Callbacks.Queued
            do { queued = try await action.db.transaction { tx in
                // An entry past its retention that the cleanup has not reached must not block the number.
                try await callbacks.expire(now: time, auditedIn: audit, on: tx)
                // A number waits in the queue once: this one is not queued again, the call stays open.
                if let waiting = try await callbacks.waiting(phoneFingerprints: vault.fingerprints(of: phone), now: time, on: tx) {
                    return try await refuseRepeat(waiting, call: call, by: acting, at: time, on: tx)
                }
                // Ending the call first: a second submit (a double click) finds it ended and queues nothing.
                guard try await calls.end(call.id, agent: acting.username, outcome: .callbackQueued, at: time, on: tx) else { return .callNotOpen }
                let id = try await callbacks.queue(
                    from: call.id, contact: .init(phone: phone.e164, name: name), phoneFingerprint: phoneFingerprint, at: time, on: tx)
                let repeated = try await history.lastTeleTAN(for: vault.fingerprints(of: phone), now: time, on: tx) != nil
                try await audit.append(AuditEvent(.hotlineCallbackQueued, .success, by: acting, subject: "callback:\(id.uuidString.lowercased())",
                    details: ["call": call.id.uuidString.lowercased(), "number": phoneFingerprint, "name": vault.fingerprint(ofName: name),
                              "repeat_caller": repeated ? "yes" : "no"]), at: time, on: tx)
                try await audit.append(ended(call, .callbackQueued, acting, at: time), at: time, on: tx)
                return .queued
            } } catch let error where (error as? any DatabaseError)?.isConstraintFailure == true {
                // Another agent queued the same number at the same moment: the unique index decided.
                guard let waiting = try await callbacks.waiting(phoneFingerprints: vault.fingerprints(of: phone), now: time, on: action.db) else { throw error }
                queued = try await refuseRepeat(waiting, call: call, by: acting, at: time, on: action.db)
            }
            switch queued {
            case .queued: return PageRenderer.redirect(to: "/hotline?done=callback_queued")
            case .callNotOpen: return PageRenderer.redirect(to: Self.path(call.id))
            case .alreadyWaiting(let since):
                return try await action.page(
                    error: renderer.text("hotline_error_already_waiting", in: context.language, ["since": renderer.dateTime(since, in: context.language)]),
                    field: "phone", status: .conflict)
            }
        }
    }

    @Sendable func end(_ request: Request, context: PermittedContext, form: CallForm) async throws -> Response {
        try await withOpenCall(form, context) { action in
            guard let outcome = action.form.outcome.flatMap(CallOutcome.init(rawValue:)), CallOutcome.endable.contains(outcome) else {
                return try await action.page(error: renderer.text("hotline_error_outcome", in: context.language), field: "outcome")
            }
            let (call, acting, time) = (action.call, action.acting, action.time)
            try await action.db.transaction { tx in
                guard try await calls.end(call.id, agent: acting.username, outcome: outcome, at: time, on: tx) else { return }
                try await audit.append(ended(call, outcome, acting, at: time), at: time, on: tx)
            }
            return PageRenderer.redirect(to: "/hotline?done=ended")
        }
    }

    /// Checks a read-back and answers with a redirect to the call page, which shows the result
    /// once: the browser keeps no form with the typed characters in its history.
    @Sendable func checkReadBack(_ request: Request, context: PermittedContext, form: ReadBackForm) async throws -> Response {
        let (user, call) = try await ownCall(context)
        let acting = context.acting
        // Nothing is compared once a read-back matched or none is left (the page then says so).
        guard call.isOpen, let fingerprint = call.teletan_fingerprint, call.readback_result != "matched",
              call.readback_attempts < Calls.readBackLimit
        else { return PageRenderer.redirect(to: Self.path(call.id)) }
        let typed = form.readBack ?? ""
        guard !ReadBack.normalised(typed).isEmpty else {
            return try await page(
                for: call, user: user, context: context, status: .badRequest,
                message: CallMessage(error: renderer.text("hotline_error_read_back_empty", in: context.language), field: "read-back"))
        }
        let result = readBack.compare(typed, fingerprint: fingerprint)
        let sealed = try readBackNotes.seal(result, for: call.id)
        let time = now()
        try await database.database(logger: context.logger).transaction { tx in
            guard let attempt = try await calls.countReadBack(
                of: call.id, agent: user.username, matched: result == .matches, sealedResult: sealed, on: tx)
            else { return }
            try await audit.append(AuditEvent(.hotlineReadBack, result == .matches ? .success : .failure, by: acting, subject: fingerprint,
                details: ["call": call.id.uuidString.lowercased(), "attempt": String(attempt),
                          "result": result == .matches ? "matches" : "does_not_match"]), at: time, on: tx)
        }
        return PageRenderer.redirect(to: Self.path(call.id))
    }

    @Sendable func passedOn(_ request: Request, context: PermittedContext, form _: TokenOnlyForm) async throws -> Response {
        let (user, call) = try await ownCall(context)
        let acting = context.acting
        guard call.isOpen, call.teletan_fingerprint != nil else { return PageRenderer.redirect(to: Self.path(call.id)) }
        let time = now()
        try await database.database(logger: context.logger).transaction { tx in
            guard try await calls.end(call.id, agent: user.username, outcome: .teleTANIssued, at: time, on: tx) else { return }
            try await audit.append(ended(call, .teleTANIssued, acting, at: time), at: time, on: tx)
        }
        return PageRenderer.redirect(to: "/hotline?done=passed_on")
    }

    // MARK: - Helpers

    /// What the call page says above the form: an error (with the field or the missing checks it
    /// concerns) or a notice.
    struct CallMessage {
        var error: String?
        var field: String?
        var missing: Set<String> = []
        var notice: String?
    }

    /// **Call back later** for a number that waits already: audited, and not queued.
    private func refuseRepeat(
        _ waiting: Callbacks.Row, call: Calls.Row, by acting: ActingUser, at time: Date, on db: any Database
    ) async throws -> Callbacks.Queued {
        try await audit.append(AuditEvent(.hotlineCallbackQueued, .refused, by: acting, subject: "callback:\(waiting.id.uuidString.lowercased())",
            details: ["call": call.id.uuidString.lowercased(), "reason": "already_waiting"]), at: time, on: db)
        return .alreadyWaiting(since: waiting.created_at)
    }

    /// The callback retention as the script says it: "one hour".
    private func retentionText(_ language: Language) -> String {
        DurationText.limit(seconds: Int(callbacks.retention), in: language)
    }

    static func path(_ id: UUID) -> String { "/hotline/calls/\(id.uuidString.lowercased())" }

    /// The signed-in agent and their call named in the path; 404 for a malformed id, an unknown
    /// call or another agent's (which is not theirs to see).
    private func ownCall(_ context: PermittedContext) async throws -> (SignedInUser, Calls.Row) {
        let user = context.user
        guard let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)),
              let call = try await calls.find(id, on: database.database(logger: context.logger)),
              call.agent == user.username
        else { throw HTTPError(.notFound) }
        return (user, call)
    }

    /// A submit of the call page's form, on the agent's own call while it is open and has no
    /// teleTAN yet (else the call page): the ticked checks are recorded first, whichever button
    /// was pressed.
    private struct CallAction {
        let user: SignedInUser
        let call: Calls.Row
        let form: CallForm
        let acting: ActingUser
        let ticked: Set<String>
        let time: Date
        let db: any Database
        /// The call page again, with an error or a notice and everything the agent typed.
        let page: (_ message: CallMessage, _ status: HTTPResponse.Status) async throws -> Response

        func page(error: String, field: String? = nil, missing: Set<String> = [], status: HTTPResponse.Status = .badRequest) async throws -> Response {
            try await page(CallMessage(error: error, field: field, missing: missing), status)
        }

        func page(notice: String) async throws -> Response {
            try await page(CallMessage(notice: notice), .ok)
        }
    }

    private func withOpenCall(
        _ form: CallForm, _ context: PermittedContext, _ body: (CallAction) async throws -> Response
    ) async throws -> Response {
        let (user, call) = try await ownCall(context)
        let acting = context.acting
        // An ended call, or one with a teleTAN (which ends with "I have passed it on"): an old
        // tab's buttons change nothing.
        guard call.isOpen, call.teletan_fingerprint == nil else { return PageRenderer.redirect(to: Self.path(call.id)) }
        let ticked = Set(form.checks ?? [])
        let time = now()
        let db = database.database(logger: context.logger)
        try await recordAnswers(ticked, of: call, by: acting, at: time, on: db)
        return try await body(CallAction(
            user: user, call: call, form: form, acting: acting, ticked: ticked, time: time, db: db,
            page: { message, status in
                try await page(
                    for: call, user: user, context: context, ticked: ticked, phone: form.phone, name: form.name, status: status, message: message)
            }))
    }

    /// Every configured check with its answer.
    private func answers(_ ticked: Set<String>) -> [String: Bool] {
        Dictionary(uniqueKeysWithValues: checks.all.map { ($0.id, ticked.contains($0.id)) })
    }

    private func recordAnswers(_ ticked: Set<String>, of call: Calls.Row, by user: ActingUser, at time: Date, on db: any Database) async throws {
        let answers = answers(ticked)
        try await db.transaction { tx in
            guard try await calls.saveAnswers(answers, of: call.id, agent: user.username, on: tx) else { return }
            try await audit.append(event(
                .hotlineChecksAnswered, .success, user, call: call.id,
                ["answers": checks.all.map { "\($0.id)=\(answers[$0.id] == true ? "yes" : "no")" }.joined(separator: ",")]), at: time, on: tx)
        }
    }

    private func event(
        _ action: AuditAction, _ outcome: AuditEvent.Outcome, _ user: ActingUser, call id: UUID, _ details: [String: String] = [:]
    ) -> AuditEvent {
        AuditEvent(action, outcome, by: user, subject: "call:\(id.uuidString.lowercased())", details: details)
    }

    private func ended(_ call: Calls.Row, _ outcome: CallOutcome, _ user: ActingUser, at time: Date) -> AuditEvent {
        event(.hotlineCallEnded, .success, user, call: call.id, call.endedDetails(outcome, at: time))
    }

    /// The call page in its current step.
    private func page(
        for call: Calls.Row, user: SignedInUser, context: PermittedContext, ticked: Set<String>? = nil,
        phone: String? = nil, name: String? = nil, status: HTTPResponse.Status = .ok, message: CallMessage = CallMessage(),
        readBackResult: ReadBack.Result? = nil
    ) async throws -> Response {
        let language = context.language
        let time = now()
        let db = database.database(logger: context.logger)
        let answered = ticked ?? call.answers
        let step = CallPage.Step(of: call)
        // Before a teleTAN is issued in this call (after it, the history names this very call).
        var repeatWarning: String?
        if step == .checks, let phone = call.phone_fingerprint, let last = try await history.lastTeleTAN(for: [phone], now: time, on: db) {
            repeatWarning = Self.repeatWarning(last: last, now: time, renderer: renderer, language: language)
        }
        // The teleTAN of this call not shown yet (the redirect after Issue was lost).
        let teleTANWaiting = step == .readBack ? try await displays.isWaiting(sessionHash: user.sessionHash, now: time, on: db) : false
        // A call that continues a reached callback: the number to call again if the line drops,
        // and the name to ask for, while the callback keeps them.
        var caller: CallPage.Caller?
        if call.isOpen, let callbackID = call.callback_id, let callback = try await callbacks.find(callbackID, on: db),
           callback.created_at > time.addingTimeInterval(-callbacks.retention),
           let contact = callbacks.contact(of: callback), let number = PhoneNumber(contact.phone) {
            caller = .init(phone: number.readable, phoneLink: "tel:\(number.e164)", name: contact.name)
        }
        return try renderer.page(CallPage(
            call: call, checks: checks, answered: answered, missing: message.missing,
            form: CallPage.Form(phone: phone, name: name, errorField: message.field), error: message.error, notice: message.notice,
            caller: caller, repeatWarning: repeatWarning, teleTANWaiting: teleTANWaiting,
            issueNonce: step == .checks ? nonces.make(sessionHash: user.sessionHash, now: time) : nil,
            readBackResult: readBackResult, idleTimeout: idleTimeout, retention: retentionText(language), now: time,
            renderer: renderer, language: language
        ), status: status, context: context)
    }

    static func repeatWarning(last: Date, now: Date, renderer: PageRenderer, language: Language) -> String {
        let days = Int(now.timeIntervalSince(last) / 86_400)
        return days == 0
            ? renderer.text("hotline_repeat_today", in: language)
            : renderer.text("hotline_repeat_days", in: language, ["days": String(days)])
    }
}
