import CPAM

/// PAM's return codes by name, for the audit trail, metrics and the log: `authinfo_unavailable`
/// says "the directory cannot be reached" where `pam_error_9` says nothing.
package enum PAMErrorName {
    /// `PAM_AUTHINFO_UNAVAIL`: what checks the password (the directory, SSSD) cannot be reached.
    package static let authinfoUnavailable = PAM_AUTHINFO_UNAVAIL

    package static func of(_ code: Int32) -> String {
        switch code {
        case PAM_OPEN_ERR: "open_error"
        case PAM_SYMBOL_ERR: "symbol_error"
        case PAM_SERVICE_ERR: "service_error"
        case PAM_SYSTEM_ERR: "system_error"
        case PAM_BUF_ERR: "buffer_error"
        case PAM_PERM_DENIED: "permission_denied"
        case PAM_AUTH_ERR: "authentication_error"
        case PAM_CRED_INSUFFICIENT: "credentials_insufficient"
        case PAM_AUTHINFO_UNAVAIL: "authinfo_unavailable"
        case PAM_USER_UNKNOWN: "user_unknown"
        case PAM_MAXTRIES: "max_tries"
        case PAM_NEW_AUTHTOK_REQD: "new_authtok_required"
        case PAM_ACCT_EXPIRED: "account_expired"
        case PAM_SESSION_ERR: "session_error"
        case PAM_CRED_UNAVAIL: "credentials_unavailable"
        case PAM_CRED_EXPIRED: "credentials_expired"
        case PAM_CRED_ERR: "credentials_error"
        case PAM_NO_MODULE_DATA: "no_module_data"
        case PAM_CONV_ERR: "conversation_error"
        case PAM_AUTHTOK_ERR: "authtok_error"
        case PAM_AUTHTOK_RECOVERY_ERR: "authtok_recovery_error"
        case PAM_AUTHTOK_LOCK_BUSY: "authtok_lock_busy"
        case PAM_AUTHTOK_DISABLE_AGING: "authtok_disable_aging"
        case PAM_TRY_AGAIN: "try_again"
        case PAM_IGNORE: "ignore"
        case PAM_ABORT: "abort"
        case PAM_AUTHTOK_EXPIRED: "authtok_expired"
        case PAM_MODULE_UNKNOWN: "module_unknown"
        case PAM_BAD_ITEM: "bad_item"
        case PAM_CONV_AGAIN: "conversation_again"
        case PAM_INCOMPLETE: "incomplete"
        default: "pam_error_\(code)"
        }
    }
}
