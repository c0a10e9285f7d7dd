import AccessControl
import Audit
import FluentKit
import Foundation
import Hummingbird
import PortalWeb

extension AuditLog {
    /// An admin opened an admin page: watching the watchers. Not for HEAD, which link checkers
    /// and health probes send without anyone looking.
    func appendView(
        _ page: String, of request: Request, by user: ActingUser, subject: String? = nil, details: [String: String] = [:],
        at time: Date, on db: any Database
    ) async throws {
        guard request.method != .head else { return }
        var details = details
        details["page"] = page
        try await append(AuditEvent(.auditView, .success, by: user, subject: subject, details: details), at: time, on: db)
    }
}
