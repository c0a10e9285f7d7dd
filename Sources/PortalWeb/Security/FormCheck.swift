import Foundation
import Hummingbird

/// A form that changes something. It is decoded and its CSRF token checked in one place
/// (``FormCheck``, reached through ``SignedInRequestContext/form(_:of:)`` or, for the sign-in
/// forms, ``FormCheck/preSessionForm(_:of:context:)``), never by a handler itself.
///
/// `csrf` may be `String` (a form without the field is refused by the decoder with 400) or
/// `String?` (refused as "CSRF token missing", 403), as each form declared it before.
package protocol PortalForm: Decodable, Sendable {
    associatedtype Token: SubmittedToken
    var csrf: Token { get }
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

/// A form field that carries a token: `String` or `String?`.
package protocol SubmittedToken: Sendable {
    var submitted: String? { get }
}

extension String: SubmittedToken {
    package var submitted: String? { self }
}

extension Optional: SubmittedToken where Wrapped == String {
    package var submitted: String? { self }
}

/// Decodes state-changing forms and checks their CSRF tokens (and one-use nonces). A form is read
/// whole first (a malformed one is 400), then its token checked (403): nothing is written before
/// both passed. A nonce found invalid is not refused here: the domain refuses it where it would
/// use it up, after its own earlier checks, and audits the refusal (``FormNonce/checked``).
package struct FormCheck: Sendable {
    let csrf: CSRF
    let nonces: FormNonces
    let now: @Sendable () -> Date

    package init(csrf: CSRF, nonces: FormNonces, now: @escaping @Sendable () -> Date) {
        self.csrf = csrf
        self.nonces = nonces
        self.now = now
    }

    /// A signed-in user's form: its token must be the one of `user`'s session.
    func signedInForm<Form: PortalForm, Context: RequestContext>(
        _ type: Form.Type, of request: Request, context: Context, for user: SignedInUser
    ) async throws -> Form where Context.Decoder == URLEncodedFormDecoder {
        let form = try await request.decode(as: type, context: context)
        try csrf.require(form.csrf.submitted, for: user)
        return form
    }

    /// A signed-in user's form with a one-use nonce: the token as above, and the nonce checked
    /// for `user`'s session.
    func signedInForm<Form: NoncedForm, Context: RequestContext>(
        _ type: Form.Type, of request: Request, context: Context, for user: SignedInUser
    ) async throws -> Form where Context.Decoder == URLEncodedFormDecoder {
        let form = try await request.decode(as: type, context: context)
        try csrf.require(form.csrf.submitted, for: user)
        var checked = form
        checked.nonce.check(with: nonces, sessionHash: user.sessionHash, now: now())
        return checked
    }

    /// A sign-in form, sent before there is a session: its token must be the one of the
    /// pre-session cookie this portal set.
    package func preSessionForm<Form: PortalForm>(
        _ type: Form.Type, of request: Request, context: PortalRequestContext
    ) async throws -> Form {
        let form = try await request.decode(as: type, context: context)
        let token = form.csrf.submitted ?? ""
        guard let cookie = request.cookies[CSRF.preSessionCookie]?.value, csrf.isServerMadePreSession(cookie) else {
            throw HTTPError(.forbidden, message: "sign-in form without the portal_presession cookie this portal set (cookies off, or another address than --public-url)")
        }
        guard csrf.isValid(token, forPreSession: cookie) else {
            throw HTTPError(.forbidden, message: token.isEmpty ? "CSRF token missing from the sign-in form"
                : "CSRF token wrong: not the one of this portal_presession cookie (a sign-in form from before the cookie changed?)")
        }
        return form
    }
}
