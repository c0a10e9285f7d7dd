import AccessControl
import Hummingbird
import Logging

/// What the contexts of signed-in route groups share: the user (never nil: ``AccessMiddleware``
/// sent everyone else to the sign-in page before the context was made) and the request's
/// ``PortalRequestContext`` for the page renderer. Its forms arrive checked with the route
/// (``DeclaredGroup/post(_:form:use:)``).
package protocol SignedInRequestContext: ChildRequestContext
where ParentContext == PortalRequestContext, Decoder == URLEncodedFormDecoder {
    /// The request's portal context: language, client address, request id, session flags.
    var portal: PortalRequestContext { get }
    var user: SignedInUser { get }
}

extension SignedInRequestContext {
    package var language: Language { portal.language }
    package var clientAddress: String? { portal.clientAddress }
    package var isHTTPS: Bool { portal.isHTTPS }
    package var requestID: String { portal.requestID }
    package var maxUploadSize: Int { portal.maxUploadSize }
    package var requestDecoder: URLEncodedFormDecoder { portal.requestDecoder }

    /// The state-changing form of this request, decoded and its CSRF token checked (403 when it
    /// is missing or not this session's), before the handler runs. Only the route declaration
    /// (``DeclaredGroup/post(_:form:use:)``) calls it.
    func checkedForm<Form: PortalForm>(_ type: Form.Type, of request: Request) async throws -> Form {
        guard let admission = portal.admission else { throw SignInRequired() }
        return try await admission.forms.signedInForm(type, of: request, context: self)
    }

    /// A form with a one-use nonce: as ``checkedForm(_:of:)``, and the nonce checked for this session.
    func checkedForm<Form: NoncedForm>(_ type: Form.Type, of request: Request) async throws -> Form {
        guard let admission = portal.admission else { throw SignInRequired() }
        return try await admission.forms.signedInForm(type, of: request, context: self)
    }
}

/// The context of a ``RouteAccess/signedIn`` group: any signed-in person, whatever their roles.
package struct SignedInContext: SignedInRequestContext {
    package var coreContext: CoreRequestContextStorage
    package let portal: PortalRequestContext
    package let user: SignedInUser

    package init(context: PortalRequestContext) throws {
        guard let user = context.identity else { throw SignInRequired() }
        coreContext = context.coreContext
        portal = context
        self.user = user
    }
}

/// The context of a ``RouteAccess/permission(_:)`` group: the signed-in user and, acting under
/// the group's permission, the ``ActingUser`` domain code takes. A handler never names the
/// permission again.
package struct PermittedContext: SignedInRequestContext {
    package var coreContext: CoreRequestContextStorage
    package let portal: PortalRequestContext
    package let user: SignedInUser
    package let acting: ActingUser

    package init(context: PortalRequestContext) throws {
        // The access middleware admitted the request under its group's permission and recorded it.
        guard case .permission(let permission)? = context.admission?.access, let user = context.identity,
              let acting = context.actingUser(for: permission)
        else { throw SignInRequired() }
        coreContext = context.coreContext
        portal = context
        self.user = user
        self.acting = acting
    }
}

extension PageRenderer {
    /// A page for a signed-in route (the banner shows who is signed in).
    package func page<Page: PageModel>(
        _ page: Page, status: HTTPResponse.Status = .ok, context: some SignedInRequestContext, headers: HTTPFields = [:]
    ) throws -> Response {
        try self.page(page, status: status, context: context.portal, headers: headers)
    }
}
