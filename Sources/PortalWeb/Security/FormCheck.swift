import Foundation
import Hummingbird

/// A form that changes something: its fields, without the CSRF token. A signed-in route declares
/// its form with the route (``DeclaredGroup/post(_:form:use:)``), so the token is checked (403)
/// and the form decoded (400 when malformed) before the handler runs; the sign-in forms go
/// through ``FormCheck/preSessionForm(_:of:context:)``. No handler reads a token itself.
package protocol PortalForm: Decodable, Sendable {}

/// The form of a button that carries only the CSRF token (sign out, take a callback, approve).
package struct TokenOnlyForm: PortalForm {
    package init(from decoder: any Decoder) throws {}
}

/// A form with a one-use nonce (issuing): ``FormCheck`` also checks the nonce's MAC, session and
/// age when it reads the form; the domain uses it up inside its transaction
/// (``FormNonces/consume(_:on:)``), so a form whose transaction rolls back stays usable.
package protocol NoncedForm: PortalForm {
    associatedtype Nonce: NonceField
    var nonce: Nonce { get set }
}

/// A form's one-use nonce as submitted, and whether ``FormCheck`` found it valid. One not read
/// through the form check counts as invalid.
package struct FormNonce: Decodable, Sendable {
    package let text: String
    package private(set) var checked: FormNonces.Checked?

    package init(from decoder: any Decoder) throws {
        text = try decoder.singleValueContainer().decode(String.self)
    }

    /// A nonce checked now, for callers without a form (domain code and its tests).
    package init(_ text: String, checkedWith nonces: FormNonces, sessionHash: String, now: Date) {
        self.text = text
        checked = nonces.check(text, sessionHash: sessionHash, now: now)
    }

    package mutating func check(with nonces: FormNonces, sessionHash: String, now: Date) {
        checked = nonces.check(text, sessionHash: sessionHash, now: now)
    }
}

/// A nonce field: `FormNonce`, or `FormNonce?` where the form may come without one.
package protocol NonceField: Sendable {
    mutating func check(with nonces: FormNonces, sessionHash: String, now: Date)
}

extension FormNonce: NonceField {}

extension Optional: NonceField where Wrapped == FormNonce {
    package mutating func check(with nonces: FormNonces, sessionHash: String, now: Date) {
        self?.check(with: nonces, sessionHash: sessionHash, now: now)
    }
}

/// The CSRF token of a submitted form, read on its own before the form: a form without one, or
/// with a wrong one, is a 403 whatever else it holds.
private struct SubmittedToken: Decodable {
    let csrf: String?
}

/// Decodes state-changing forms and checks their CSRF tokens (and one-use nonces). The token is
/// checked first (403 when missing or wrong), then the form read whole (a malformed one is 400):
/// nothing is written before both passed. A nonce found invalid is not refused here: the domain
/// refuses it where it would use it up, after its own earlier checks, and audits the refusal
/// (``FormNonce/checked``).
package struct FormCheck: Sendable {
    let csrf: CSRF
    let nonces: FormNonces
    let now: @Sendable () -> Date

    package init(csrf: CSRF, nonces: FormNonces, now: @escaping @Sendable () -> Date) {
        self.csrf = csrf
        self.nonces = nonces
        self.now = now
    }

    /// A signed-in user's form: its token must be the one of the user's session.
    func signedInForm<Form: PortalForm, Context: SignedInRequestContext>(
        _ type: Form.Type, of request: Request, context: Context
    ) async throws -> Form {
        var request = request
        try csrf.require(try await Self.token(of: &request, context: context), for: context.user)
        return try await request.decode(as: type, context: context)
    }

    /// A signed-in user's form with a one-use nonce: the token as above, and the nonce checked
    /// for the user's session.
    func signedInForm<Form: NoncedForm, Context: SignedInRequestContext>(
        _ type: Form.Type, of request: Request, context: Context
    ) async throws -> Form {
        var request = request
        try csrf.require(try await Self.token(of: &request, context: context), for: context.user)
        var form = try await request.decode(as: type, context: context)
        form.nonce.check(with: nonces, sessionHash: context.user.sessionHash, now: now())
        return form
    }

    /// A sign-in form, sent before there is a session: its token must be the one of the
    /// pre-session cookie this portal set.
    package func preSessionForm<Form: PortalForm>(
        _ type: Form.Type, of request: Request, context: PortalRequestContext
    ) async throws -> Form {
        var request = request
        let token = try await Self.token(of: &request, context: context) ?? ""
        guard let cookie = request.cookies[CSRF.preSessionCookie]?.value, csrf.isServerMadePreSession(cookie) else {
            throw HTTPError(.forbidden, message: "sign-in form without the portal_presession cookie this portal set (cookies off, or another address than --public-url)")
        }
        guard csrf.isValid(token, forPreSession: cookie) else {
            throw HTTPError(.forbidden, message: token.isEmpty ? "CSRF token missing from the sign-in form"
                : "CSRF token wrong: not the one of this portal_presession cookie (a sign-in form from before the cookie changed?)")
        }
        return try await request.decode(as: type, context: context)
    }

    /// The form's `csrf` field. The body is collected into the request first, so that the form
    /// can be decoded from it again.
    private static func token(of request: inout Request, context: some RequestContext) async throws -> String? {
        _ = try await request.collectBody(upTo: context.maxUploadSize)
        return try await request.decode(as: SubmittedToken.self, context: context).csrf
    }
}
