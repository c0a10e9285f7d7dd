import HTTPTypes
import Foundation
import Hummingbird
import Storage
import TeleTAN

/// The start page with the issuing form, issuing, the once-only result page, and "passed on".
struct TeleTANController: Sendable {
    let database: PortalDatabase
    let authorization: Authorization
    let issuer: TeleTANIssuer
    let nonces: FormNonces
    let displays: PendingDisplays
    let renderer: PageRenderer
    let displayTime: Duration
    let now: @Sendable () -> Date

    func addRoutes(to router: Router<PortalRequestContext>) {
        router.get("/", use: home)
        router.post("/teletan", use: issue)
        router.get("/teletan/result", use: result)
        router.post("/teletan/done", use: done)
    }

    struct IssueForm: Decodable {
        let csrf: String
        let nonce: String
    }

    struct DoneForm: Decodable {
        let csrf: String
    }

    @Sendable func home(_ request: Request, context: PortalRequestContext) async throws -> Response {
        let user = try authorization.requireUser(context)
        guard !user.roles.isEmpty else {
            return try renderer.page("no-role", context: context)
        }
        var values: [String: Any] = [:]
        if request.uri.queryParameters["hidden"] != nil { values["teletan_was_hidden"] = true }
        if user.has(anyOf: Role.teleTANIssuers) {
            values["issue_nonce"] = nonces.make(sessionHash: user.sessionHash, now: now())
        }
        return try renderer.page("home", context: context, values: values)
    }

    @Sendable func issue(_ request: Request, context: PortalRequestContext) async throws -> Response {
        let user = try await authorization.require(anyOf: Role.teleTANIssuers, request: request, context: context)
        let form = try await request.decode(as: IssueForm.self, context: context)
        try authorization.requireCSRF(form.csrf, for: user)
        let role = user.actingRole(for: Role.teleTANIssuers)!
        _ = try await issuer.issue(type: .test, for: user, role: role, nonce: form.nonce, context: context)
        // Issued or not (a second click), the result page shows what is waiting, at most once.
        return PageRenderer.redirect(to: "/teletan/result")
    }

    @Sendable func result(_ request: Request, context: PortalRequestContext) async throws -> Response {
        let user = try await authorization.require(anyOf: Role.teleTANIssuers, request: request, context: context)
        // A HEAD must not use up the one showing: only a GET takes the teleTAN.
        if request.method == .head {
            return try renderer.page("already-shown", context: context)
        }
        let db = database.database(logger: context.logger)
        guard let (content, storedAt) = try await displays.take(sessionHash: user.sessionHash, on: db),
              let teleTAN = TeleTAN(content.teleTAN),
              now().timeIntervalSince(storedAt) < displayTime.seconds
        else {
            return try renderer.page("already-shown", context: context)
        }
        // With the time zone: the caller may be elsewhere, the server may run in UTC.
        let validUntil = content.validUntil.formatted(
            .dateTime.day().month(.abbreviated).year().hour(.twoDigits(amPM: .omitted)).minute().timeZone(.specificName(.short))
                .locale(Locale(identifier: context.language == .german ? "de_DE" : "en_GB")))
        let remaining = max(1, Int(displayTime.seconds - now().timeIntervalSince(storedAt)))
        let groups: [[String: String]] = teleTAN.groups.map { group in
            ["text": group, "spelled": group.map { SpellingAlphabet.spell($0, in: context.language) }.joined(separator: " - ")]
        }
        return try renderer.page("result", context: context, values: [
            "groups": groups,
            "type": content.type,
            "valid_until": validUntil,
            "valid_until_iso": content.validUntil.formatted(.iso8601),
            "hide_after_seconds": remaining,
            "hidden_after_text": (context.language.strings["result_hidden_after"] ?? "")
                .replacingOccurrences(of: "{duration}", with: DurationText.text(seconds: Int(displayTime.seconds.rounded(.up)), in: context.language)),
            // Switching language would leave the page, and the teleTAN is never shown again.
            "hide_language_switch": true,
        ], headers: [
            // Leaves the page when the display time is over, even without JavaScript; the start
            // page then says why the teleTAN is gone.
            .refresh: "\(remaining);url=/?hidden=1",
        ])
    }

    @Sendable func done(_ request: Request, context: PortalRequestContext) async throws -> Response {
        let user = try await authorization.require(anyOf: Role.teleTANIssuers, request: request, context: context)
        let form = try await request.decode(as: DoneForm.self, context: context)
        try authorization.requireCSRF(form.csrf, for: user)
        var response = PageRenderer.redirect(to: "/")
        // Evicts the result page from the browser's back/forward cache, which may keep even a
        // `no-store` page: the back button must not bring the teleTAN back.
        response.headers[HTTPField.Name("Clear-Site-Data")!] = "\"cache\""
        return response
    }
}

extension HTTPField.Name {
    static let refresh = HTTPField.Name("Refresh")!
}
