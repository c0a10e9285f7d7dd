import AccessControl
import Audit
import FluentKit
import Foundation
import Hummingbird
import PAMAuth
import PortalWeb
import Storage

/// Sign-in through PAM, in as many form steps as the PAM stack asks for, and sign-out. The rules
/// (what is put to PAM, locks, what a failure counts) are ``SignInPolicy``'s; this controller
/// translates between HTTP and them, PAM and the session.
///
/// A wrong password and an unknown name show the same message; an account that authenticated but
/// may not sign in (expired, locked) gets its own, and does not count as a wrong password. A
/// locked name or address gets 429 (a lock says nothing about whether the account exists).
///
/// The session, the audit trail and every per-user rule use the account's canonical name (see
/// ``PAMOutcome/success(username:)``); failed sign-ins count under ``AccountKey``.
struct SignInController: Sendable {
    static let conversationCookie = "portal_signin"

    let database: PortalDatabase
    let pam: PAMAuthenticator
    let roleGroups: RoleGroups
    let sessions: SessionStore
    let policy: SignInPolicy
    let csrf: CSRF
    let forms: FormCheck
    let audit: AuditLog
    let renderer: PageRenderer
    let metrics: PortalMetrics
    let busyRefusals = RefusalTally()
    let crowdRefusals = RefusalTally()
    /// At most as many sign-in requests at once as PAM has threads.
    let gate: SignInGate
    /// Where a new session starts (a hotline agent's open call, say).
    let landing: SignInFeature.Landing
    /// The least time a failed sign-in takes, whether or not the account exists.
    let failureTime: FailureTime
    let now: @Sendable () -> Date

    func addRoutes(to routes: DeclaredRoutes) {
        routes.group("/signin", access: .public)
            .get(use: showForm)
            .post(use: signIn)
            .post("continue", use: continueSignIn)
        routes.group("/signout", access: .signedIn)
            .post(form: TokenOnlyForm.self, use: signOut)
    }

    struct SignInForm: PortalForm {
        let username: String
        let password: String
    }

    struct StepForm: PortalForm {
        let answer: String?
        let new_password: String?
        let new_password_repeat: String?
    }

    // MARK: - Routes

    @Sendable func showForm(_ request: Request, context: PortalRequestContext) async throws -> Response {
        if context.identity != nil { return PageRenderer.redirect(to: "/") }
        let notice: String? = context.sessionEndedByAdmin || request.uri.queryParameters["ended"] != nil ? "session_ended_by_admin"
            : context.sessionExpired || request.uri.queryParameters["expired"] != nil ? "session_expired"
            : request.uri.queryParameters["signedout"] != nil ? "signed_out" : nil
        return try signInPage(request: request, context: context, status: .ok, notice: notice)
    }

    // The form is read and its CSRF token checked before the gate: a client that sends its body
    // slowly, or not at all, holds no place in it.
    @Sendable func signIn(_ request: Request, context: PortalRequestContext) async throws -> Response {
        let arrived = ContinuousClock.now
        let form = try await forms.preSessionForm(SignInForm.self, of: request, context: context)
        let response = try await throughGate(username: Self.trimmed(form.username), request: request, context: context) {
            try await signInAdmitted(form, request: request, context: context)
        }
        return await paddedIfFailed(response, since: arrived)
    }

    @Sendable func continueSignIn(_ request: Request, context: PortalRequestContext) async throws -> Response {
        let arrived = ContinuousClock.now
        let form = try await forms.preSessionForm(StepForm.self, of: request, context: context)
        let response = try await throughGate(username: nil, request: request, context: context) {
            try await continueSignInAdmitted(form, request: request, context: context)
        }
        return await paddedIfFailed(response, since: arrived)
    }

    /// A failed sign-in's answer waits out ``failureTime`` (outside the gate, so it holds no place).
    private func paddedIfFailed(_ response: Response, since arrived: ContinuousClock.Instant) async -> Response {
        if FailureTime.isFailure(response.status) { await failureTime.wait(since: arrived) }
        return response
    }

    /// Runs a sign-in step if the gate has room for it, else refuses it as one too many.
    private func throughGate(
        username: String?, request: Request, context: PortalRequestContext, _ step: () async throws -> Response
    ) async throws -> Response {
        if let answer = try await gate.ifRoom(for: context.clientAddress.map(AddressKey.of), step) { return answer }
        return try await refuseCrowd(username: username, request: request, context: context)
    }

    /// How long a refusal that costs the portal nothing (a lock, a full gate, PAM busy) takes to arrive. A
    /// client that sprays sign-ins as fast as they are answered would otherwise take the CPU from
    /// signed-in users with thousands of cheap requests a second; waiting costs no thread.
    static let refusalDelay: Duration = .milliseconds(250)

    /// More sign-ins under way than the gate lets in: 429 without touching the database but (once
    /// a minute) for an audit entry; the rest are summed up like PAM-busy refusals.
    private func refuseCrowd(username: String?, request: Request, context: PortalRequestContext) async throws -> Response {
        try await freeRefusal(
            reason: Self.crowdReason, ownEntry: crowdRefusals.refuse(), username: username, status: .tooManyRequests,
            error: "sign_in_crowded", retryAfter: 5, request: request, context: context)
    }

    /// A refusal that cost the portal nothing (a full gate, a lock, PAM busy): answered after
    /// ``refusalDelay``, and an audit entry of its own only if `ownEntry` (the rest are summed up).
    private func freeRefusal(
        reason: String, ownEntry: Bool, username: String?, status: HTTPResponse.Status, error: String,
        errorValues: [String: String] = [:], retryAfter: Int, request: Request, context: PortalRequestContext
    ) async throws -> Response {
        try? await Task.sleep(for: Self.refusalDelay)
        if ownEntry {
            try await recordFailure(username: username ?? "", reason: reason, attempt: .settled, context: context)
        } else {
            metrics.signIn(outcome: reason)
        }
        var response = try signInPage(
            request: request, context: context, username: username, status: status, error: error, errorValues: errorValues)
        response.headers[.retryAfter] = String(retryAfter)
        return response
    }

    static let crowdReason = "too_many_at_once"

    private func signInAdmitted(_ form: SignInForm, request: Request, context: PortalRequestContext) async throws -> Response {
        let password = SecretBytes(form.password)
        let username = Self.trimmed(form.username)
        switch try await policy.admit(attempt(username, context), password: form.password, on: database.database(logger: context.logger)) {
        case .admitted: break
        case .failsLikeWrongPassword:
            return try signInPage(request: request, context: context, username: username, status: .unauthorized, error: "sign_in_failed")
        case .locked(let ownEntry):
            return try await refuseThrottled(ownEntry: ownEntry, username: username, request: request, context: context)
        }
        if let previous = request.cookies[Self.conversationCookie]?.value { await pam.cancel(previous) }
        let start = ContinuousClock.now
        let outcome = await pam.authenticate(username: username, password: password, remoteHost: context.clientAddress)
        metrics.pamStep(duration: ContinuousClock.now - start)
        return try await handle(outcome, username: username, request: request, context: context)
    }

    private func continueSignInAdmitted(_ form: StepForm, request: Request, context: PortalRequestContext) async throws -> Response {
        guard let conversationID = request.cookies[Self.conversationCookie]?.value else {
            return try signInPage(request: request, context: context, status: .unauthorized, error: "sign_in_step_expired")
        }
        let waiting = pam.username(ofWaiting: conversationID)
        let typed = [form.answer, form.new_password, form.new_password_repeat].compactMap { $0 }
        if case .end(let reason) = try await policy.nextStep(
            of: waiting, typed: typed, address: context.clientAddress, on: database.database(logger: context.logger)) {
            return try await endConversation(conversationID, username: waiting ?? "", reason: reason, request: request, context: context)
        }
        let answers: [SecretBytes] = if let newPassword = form.new_password {
            [SecretBytes(newPassword), SecretBytes(form.new_password_repeat ?? "")]
        } else {
            [SecretBytes(form.answer ?? "")]
        }
        let start = ContinuousClock.now
        let (username, outcome) = await pam.answer(conversationID, with: answers)
        metrics.pamStep(duration: ContinuousClock.now - start)
        return try await handle(outcome, username: username, request: request, context: context)
    }

    /// Ends a waiting conversation without answering it, with the generic failure page.
    private func endConversation(
        _ conversationID: String, username: String, reason: String, request: Request, context: PortalRequestContext
    ) async throws -> Response {
        await pam.cancel(conversationID)
        try await recordFailure(username: username, reason: reason, attempt: .settled, context: context)
        var response = try signInPage(request: request, context: context, username: username, status: .unauthorized, error: "sign_in_failed")
        response.setCookie(Self.clearConversationCookie(secure: context.isHTTPS))
        return response
    }

    @Sendable func signOut(_ request: Request, context: SignedInContext, form _: TokenOnlyForm) async throws -> Response {
        let user = context.user
        let db = database.database(logger: context.logger)
        try await db.transaction { tx in
            try await sessions.end(sessionHash: user.sessionHash, on: tx)
            try await audit.append(AuditEvent(
                action: .signOut, outcome: .success, actor: user.username,
                address: context.clientAddress, requestID: context.requestID), at: now(), on: tx)
        }
        return PageRenderer.redirect(to: "/signin?signedout=1", cookies: [SessionMiddleware.clearingCookie(secure: context.isHTTPS)])
    }

    // MARK: - Outcomes

    private func handle(_ outcome: PAMOutcome, username: String, request: Request, context: PortalRequestContext) async throws -> Response {
        switch outcome {
        case .success(let pamUsername):
            return try await completeSignIn(username: pamUsername, typed: username, request: request, context: context)
        case .challenge(let challenge):
            var response = try stepPage(challenge, request: request, context: context)
            response.setCookie(Cookie(
                name: Self.conversationCookie, value: challenge.conversationID, maxAge: 300, path: "/signin",
                secure: context.isHTTPS, httpOnly: true, sameSite: .strict))
            return response
        case .failure(let failure):
            var response: Response
            switch failure {
            case .authenticationFailed:
                try await recordFailure(username: username, reason: failure.auditReason, attempt: SignInPolicy.ending(of: failure), context: context)
                response = try signInPage(request: request, context: context, username: username, status: .unauthorized, error: "sign_in_failed")
            case .accountRefused:
                // The account itself may not sign in (expired, disabled, locked, outside its hours):
                // its own message (no wrong password to count, see SignInPolicy.ending(of:)).
                try await recordFailure(username: username, reason: failure.auditReason, attempt: SignInPolicy.ending(of: failure), context: context)
                response = try signInPage(
                    request: request, context: context, username: username, status: .forbidden, error: "sign_in_account_refused")
            case .passwordChangeFailed(let messages):
                // The password was right (only expired): no failure.
                try await recordFailure(username: username, reason: failure.auditReason, attempt: SignInPolicy.ending(of: failure), context: context)
                response = try signInPage(
                    request: request, context: context, username: username, status: .unauthorized, error: "password_change_failed",
                    details: messages)
            case .conversationExpired:
                // An abandoned conversation keeps its attempt counted: it may have been a guess.
                try await recordFailure(username: username, reason: failure.auditReason, attempt: SignInPolicy.ending(of: failure), context: context)
                response = try signInPage(request: request, context: context, username: username, status: .unauthorized, error: "sign_in_step_expired")
            case .busy:
                // Turned away without asking PAM: no verdict, so the attempt is given back.
                try await policy.giveBack(attempt(username, context), on: database.database(logger: context.logger))
                response = try await freeRefusal(
                    reason: failure.auditReason, ownEntry: busyRefusals.refuse(), username: username, status: .serviceUnavailable,
                    error: "sign_in_unavailable", retryAfter: 5, request: request, context: context)
            case .timedOut, .systemError:
                logUnavailable(failure, context: context)
                try await recordFailure(username: username, reason: failure.auditReason, attempt: SignInPolicy.ending(of: failure), context: context)
                // "Try again" only where waiting can help; a broken service file or module needs the administrator.
                let error = failure.isServiceProblem ? "sign_in_misconfigured" : "sign_in_unavailable"
                response = try signInPage(request: request, context: context, username: username, status: .serviceUnavailable, error: error)
            }
            response.setCookie(Self.clearConversationCookie(secure: context.isHTTPS))
            return response
        }
    }

    private func completeSignIn(username: String, typed: String, request: Request, context: PortalRequestContext) async throws -> Response {
        let groups: [String]
        do {
            groups = try await pam.runBlocking { UnixGroups.names(of: username) }
        } catch is PAMAuthenticator.TimedOut {
            // The password was right, but the directory does not say which roles: no verdict.
            try await recordFailure(username: typed, reason: PAMFailure.timedOut.auditReason, attempt: .givenBack, context: context)
            var response = try signInPage(request: request, context: context, username: typed, status: .serviceUnavailable, error: "sign_in_unavailable")
            response.setCookie(Self.clearConversationCookie(secure: context.isHTTPS))
            return response
        }
        let roles = roleGroups.roles(forGroups: groups)
        let db = database.database(logger: context.logger)
        let time = now()
        let (cookieValue, next) = try await db.transaction { tx in
            // Signing in again ends the session this browser had: never two at once, never reused.
            if let previous = context.identity { try await sessions.end(sessionHash: previous.sessionHash, on: tx) }
            let (cookieValue, _) = try await sessions.create(username: username, roles: roles, address: context.clientAddress, now: time, on: tx)
            try await policy.recordSuccess(typed: typed, signedIn: username, on: tx)
            try await audit.append(AuditEvent(
                action: .signIn, outcome: .success, actor: username,
                role: roles.joined,
                address: context.clientAddress, requestID: context.requestID,
                details: SignInPolicy.typedDetail(typed, actor: username)), at: time, on: tx)
            return (cookieValue, try await landing(username, roles, tx))
        }
        metrics.signIn(outcome: "success")
        return PageRenderer.redirect(to: next, cookies: [
            SessionMiddleware.cookie(value: cookieValue, secure: context.isHTTPS),
            Self.clearConversationCookie(secure: context.isHTTPS),
        ])
    }

    /// The operator's line for a sign-in PAM could not decide (the "try again" page says nothing
    /// more to the person signing in). The PAM timeout has its own line where it is measured.
    private func logUnavailable(_ failure: PAMFailure, context: PortalRequestContext) {
        guard let name = failure.errorName else { return }
        let metadata: Logger.Metadata = ["pam_error": "\(name)", "pam_service": "\(pam.configuration.service)"]
        if failure == .systemError(code: PAMErrorName.authinfoUnavailable) {
            context.logger.warning(
                "PAM cannot reach what checks passwords (directory or SSSD down, or pam_unix without read access to /etc/shadow?): sign-ins answer 503",
                metadata: metadata)
        } else {
            context.logger.error(
                "PAM failed: the PAM service file or one of its modules is broken (`portal check-config` names what it can); sign-ins answer 503",
                metadata: metadata)
        }
    }

    /// A locked name or address: 429 without asking PAM. The first attempt a lock refuses has its
    /// own audit entry; the rest only count on the lock, and one entry sums them up when it ends.
    private func refuseThrottled(ownEntry: Bool, username: String, request: Request, context: PortalRequestContext) async throws -> Response {
        // The message names the lock's length (issue 18): "try again later" left people guessing.
        let lockout = Int(policy.lockout.components.seconds)
        return try await freeRefusal(
            reason: "throttled", ownEntry: ownEntry, username: username, status: .tooManyRequests, error: "sign_in_throttled",
            errorValues: ["duration": DurationText.text(seconds: lockout, in: context.language)],
            retryAfter: lockout, request: request, context: context)
    }

    /// Writes the counts of sign-ins turned away while PAM was busy or too many were under way
    /// (see ``RefusalTally``).
    func recordBusyRefusals(now time: Date, on db: any Database) async throws {
        for (tally, reason) in [(busyRefusals, PAMFailure.busy.auditReason), (crowdRefusals, Self.crowdReason)] {
            let count = tally.takeCount()
            guard count > 0 else { continue }
            do {
                try await audit.append(AuditEvent(
                    action: .signIn, outcome: .failure, details: ["reason": reason, "refused": String(count)]), at: time, on: db)
            } catch {
                tally.giveBack(count)
                throw error
            }
        }
    }

    /// This request's sign-in attempt, as the rules see it.
    private func attempt(_ username: String, _ context: PortalRequestContext) -> SignInPolicy.Attempt {
        SignInPolicy.Attempt(username: username, address: context.clientAddress, requestID: context.requestID)
    }

    private func recordFailure(username: String, reason: String, attempt ending: SignInPolicy.AttemptEnd, context: PortalRequestContext) async throws {
        try await policy.recordFailure(attempt(username, context), reason: reason, ending: ending, on: database.database(logger: context.logger))
    }

    // MARK: - Pages

    private func preSession(_ request: Request) -> (value: String, isNew: Bool) {
        // Only a value this portal made: one the client chose (or a site that can set cookies for
        // this host chose for it) is replaced.
        if let value = request.cookies[CSRF.preSessionCookie]?.value, csrf.isServerMadePreSession(value) { return (value, false) }
        return (csrf.makePreSession(), true)
    }

    /// The sign-in form; after a failure it keeps the name that was typed (never the password).
    private func signInPage(
        request: Request, context: PortalRequestContext, username: String? = nil, status: HTTPResponse.Status,
        notice: String? = nil, error: String? = nil, errorValues: [String: String] = [:], details: [String] = []
    ) throws -> Response {
        let pre = preSession(request)
        let page = SignInPage(
            csrf: csrf.token(forPreSession: pre.value), typedName: username, noticeKey: notice, errorKey: error,
            errorValues: errorValues, details: details, renderer: renderer, language: context.language)
        var response = try renderer.page(page, status: status, context: context)
        if pre.isNew {
            response.setCookie(Cookie(
                name: CSRF.preSessionCookie, value: pre.value, path: "/", secure: context.isHTTPS, httpOnly: true, sameSite: .strict))
        }
        return response
    }

    private func stepPage(_ challenge: PAMChallenge, request: Request, context: PortalRequestContext) throws -> Response {
        let pre = preSession(request)
        guard !pre.isNew else { throw HTTPError(.forbidden, message: "sign-in step without the portal_presession cookie this portal set") }
        let token = csrf.token(forPreSession: pre.value)
        if challenge.phase == .passwordChange {
            return try renderer.page(PasswordChangePage(csrf: token, challenge: challenge), context: context)
        }
        return try renderer.page(SignInStepPage(csrf: token, challenge: challenge), context: context)
    }

    static func clearConversationCookie(secure: Bool) -> Cookie {
        Cookie(name: conversationCookie, value: "", maxAge: 0, path: "/signin", secure: secure, httpOnly: true, sameSite: .strict)
    }
}

extension PAMFailure {
    /// The reason recorded in the audit trail (never shown to the person signing in).
    var auditReason: String {
        switch self {
        case .authenticationFailed: "authentication_failed"
        case .accountRefused: "account_refused"
        case .passwordChangeFailed: "password_change_failed"
        case .conversationExpired: "step_expired"
        case .timedOut: "pam_timeout"
        case .busy: "pam_busy"
        case .systemError(let code): PAMErrorName.of(code)
        }
    }
}

extension SignInController {
    /// The typed name without surrounding spaces; invisible characters (which Foundation counts
    /// as white space in part) stay, so that the name is refused rather than quietly changed.
    static func trimmed(_ typed: String) -> String {
        var scalars = Substring(typed).unicodeScalars
        let trimmable = { (scalar: Unicode.Scalar) in
            CharacterSet.whitespaces.contains(scalar) && !PAMAuthenticator.isHidden(scalar)
        }
        while let first = scalars.first, trimmable(first) { scalars.removeFirst() }
        while let last = scalars.last, trimmable(last) { scalars.removeLast() }
        return String(scalars)
    }
}
