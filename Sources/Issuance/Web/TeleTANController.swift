import AccessControl
import Foundation
import HTTPTypes
import Hummingbird
import PortalWeb
import Storage
import TeleTAN

/// The start page with the issuing form, issuing, the once-only result page, and "passed on".
struct TeleTANController: Sendable {
    let database: PortalDatabase
    let issuer: TeleTANIssuer
    let nonces: FormNonces
    let displays: PendingDisplays
    let events: EventController
    let renderer: PageRenderer
    let now: @Sendable () -> Date

    func addRoutes(to routes: DeclaredRoutes) {
        routes.group(access: .signedIn)
            .get("/", use: home)
        routes.group("/teletan", access: .permission(.issueTestTeleTAN))
            .post(form: IssueForm.self, use: issue)
        // Every issuing role's new teleTANs (TEST, EVENT, from a hotline call) are shown here.
        routes.group("/teletan", access: .permission(.seeOwnTeleTANs))
            .get("result", use: result)
            .post("done", form: DoneForm.self, use: done)
    }

    struct IssueForm: NoncedForm {
        var nonce: FormNonce
    }

    struct DoneForm: PortalForm {
        /// Set on the result page of a hotline call: the call goes on with the read-back.
        let call: String?
    }

    @Sendable func home(_ request: Request, context: SignedInContext) async throws -> Response {
        let user = context.user
        guard !user.roles.isEmpty else {
            return try renderer.page(NoRolePage(), context: context)
        }
        let mayIssue = user.may(.issueTestTeleTAN)
        let mayIssueEvent = user.may(.issueEventTeleTAN)
        // Whoever issues in any way may have a teleTAN waiting to be shown.
        let waiting = user.may(.seeOwnTeleTANs)
            ? try await displays.isWaiting(sessionHash: user.sessionHash, now: now(), on: database.database(logger: context.logger))
            : false
        return try renderer.page(HomePage(
            for: user,
            teleTANWasHidden: request.uri.queryParameters["hidden"] != nil,
            teleTANWaiting: waiting,
            issueNonce: mayIssue && !waiting ? nonces.make(sessionHash: user.sessionHash, now: now()) : nil,
            event: mayIssueEvent
                ? try await events.section(for: user, waiting: waiting, notice: request.uri.queryParameters["event"].map(String.init),
                                           context: context)
                : nil
        ), context: context)
    }

    @Sendable func issue(_ request: Request, context: PermittedContext, form: IssueForm) async throws -> Response {
        switch try await issuer.issue(type: .test, by: context.acting, nonce: form.nonce) {
        case .formInvalid: throw FormExpired()
        case .issued, .formAlreadyUsed, .teleTANWaiting, .refused: break
        }
        // Issued or not (a second click), the result page shows what is waiting, at most once.
        return PageRenderer.redirect(to: "/teletan/result")
    }

    @Sendable func result(_ request: Request, context: PermittedContext) async throws -> Response {
        let user = context.user
        // A HEAD must not use up the one showing: only a GET takes the teleTAN.
        if request.method == .head {
            return try renderer.page(AlreadyShownPage(), context: context)
        }
        // Nor a link from another site (the session cookie is SameSite=Lax, so such a top-level
        // GET arrives signed in): the start page offers the waiting teleTAN instead.
        if request.comesFromAnotherSite {
            return PageRenderer.redirect(to: "/")
        }
        let db = database.database(logger: context.logger)
        guard let (content, storedAt) = try await displays.take(sessionHash: user.sessionHash, now: now(), on: db),
              let teleTAN = TeleTAN(content.teleTAN)
        else {
            return try renderer.page(AlreadyShownPage(), context: context)
        }
        // Opened late (from the start page's offer), it is hidden sooner: say when, truly.
        let remaining = max(1, Int((displays.displayTime.seconds - now().timeIntervalSince(storedAt)).rounded(.up)))
        let page = ResultPage(teleTAN: teleTAN, content: content, remainingSeconds: remaining, renderer: renderer, language: context.language)
        return try renderer.page(page, context: context, headers: [
            // Leaves the page when the display time is over, even without JavaScript; the start
            // page (or, in a hotline call, the call page: the agent stays in the call) then says
            // why the teleTAN is gone.
            .refresh: "\(remaining);url=\(Self.pageAfterDisplay(callID: content.callID))?hidden=1",
        ])
    }

    /// Where the result page goes when its display time is over: the call's page for a teleTAN
    /// of a hotline call, else the start page.
    static func pageAfterDisplay(callID: String?) -> String {
        callID.flatMap(UUID.init(uuidString:)).map { "/hotline/calls/\($0.uuidString.lowercased())" } ?? "/"
    }

    @Sendable func done(_ request: Request, context: PermittedContext, form: DoneForm) async throws -> Response {
        // Only ever a call's own page: the value is a UUID or ignored.
        let next = Self.pageAfterDisplay(callID: form.call)
        var response = PageRenderer.redirect(to: next)
        // Evicts the result page from the browser's back/forward cache, which may keep even a
        // `no-store` page: the back button must not bring the teleTAN back.
        response.headers[HTTPField.Name("Clear-Site-Data")!] = "\"cache\""
        return response
    }
}

extension HTTPField.Name {
    static let refresh = HTTPField.Name("Refresh")!
}
