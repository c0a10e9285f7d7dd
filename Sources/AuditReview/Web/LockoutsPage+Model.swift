import Audit
import PortalWeb
import Storage
import TeleTAN

extension LockoutsPage {
    /// A lock in force with what the audit trail says of the sign-ins behind it.
    struct Lock {
        let lock: Lockouts.ActiveLock
        let activity: LockoutActivity.Summary
    }

    init(locks: [Lock], notice: String?, renderer: PageRenderer, language: Language) {
        self.init(
            items: locks.map { item in
                let (lock, summary) = (item.lock, item.activity)
                let field = lock.scope == "user" ? "actor" : "address"
                return Item(
                    scope: lock.scope, scopeLabel: renderer.text("admin_lockouts_scope_\(lock.scope)", in: language), key: lock.key,
                    until: renderer.auditTime(lock.until, in: language), failures: String(summary.failures),
                    others: summary.others.isEmpty ? "-" : summary.others.prefix(5).joined(separator: ", ") + (summary.others.count > 5 ? ", …" : ""),
                    lastAttempt: summary.lastAttempt.map { renderer.auditTime($0, in: language) } ?? "-",
                    // A teleTAN typed as a username must not go into a URL; the search finds
                    // single addresses, not an IPv6 /64 (whose addresses the page lists).
                    entriesLink: TeleTAN(lock.key.uppercased()) != nil || lock.key.hasSuffix("/64")
                        ? nil : "/admin/audit?\(field)=\(AuditFilter.encode(lock.key))&action=\(AuditAction.signIn.rawValue)")
            },
            notice: notice)
    }
}
