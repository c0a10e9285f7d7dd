import AccessControl
import Audit

extension AuditEvent {
    /// What `user` did: the actor, role, client address and request id come from who acts.
    package init(_ action: AuditAction, _ outcome: Outcome, by user: ActingUser, subject: String? = nil, details: [String: String] = [:]) {
        self.init(action: action, outcome: outcome, actor: user.username, role: user.role.rawValue, address: user.address,
                  requestID: user.requestID, subject: subject, details: details)
    }
}
