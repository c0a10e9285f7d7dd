import CPAM
#if canImport(Glibc)
import Glibc
#endif

/// One PAM transaction, run synchronously on a pool thread: `pam_start`, `pam_authenticate`,
/// always `pam_acct_mgmt`, `pam_chauthtok` if the password has expired, `pam_end`.
/// One handle per attempt; nothing is shared between attempts.
final class PAMTransaction {
    private let service: String
    private let username: String
    private let password: SecretBytes
    private let remoteHost: String?
    private let bridge: ConversationBridge
    private let conversationID: String
    private let promptTimeout: Duration
    private let modules: LoadedModules

    private var phase: PAMChallenge.Phase = .authentication
    private var passwordUsed = false
    private var currentPasswordGiven = false
    /// Answers the person gave for the current question, used in order for the next prompts.
    private var queuedAnswers: [SecretBytes] = []
    private var messages: [String] = []

    init(service: String, username: String, password: SecretBytes, remoteHost: String?,
         bridge: ConversationBridge, conversationID: String, promptTimeout: Duration, modules: LoadedModules) {
        self.service = service
        self.username = username
        self.password = password
        self.remoteHost = remoteHost
        self.bridge = bridge
        self.conversationID = conversationID
        self.promptTimeout = promptTimeout
        self.modules = modules
    }

    /// Runs the whole transaction and returns its final outcome (never `.challenge`).
    func run() -> PAMOutcome {
        var handle: OpaquePointer?
        var conversation = pam_conv(conv: pamConversation, appdata_ptr: Unmanaged.passUnretained(self).toOpaque())
        var status = pam_start(service, username, &conversation, &handle)
        guard status == PAM_SUCCESS, let handle else {
            return .failure(.systemError(code: status))
        }
        defer {
            // Before pam_end unloads them (see LoadedModules: pam_sss would crash the process later).
            modules.pinAll()
            pam_end(handle, status)
        }
        if let remoteHost { pam_set_item(handle, PAM_RHOST, remoteHost) }

        status = pam_authenticate(handle, Int32(PAM_DISALLOW_NULL_AUTHTOK))
        guard status == PAM_SUCCESS else { return authenticationFailure(status) }

        // Never skip account management: an expired or locked account authenticates fine.
        // Its messages (why the password must be changed) go with the first change prompt.
        messages = []
        status = pam_acct_mgmt(handle, Int32(PAM_DISALLOW_NULL_AUTHTOK))
        if status == PAM_NEW_AUTHTOK_REQD {
            phase = .passwordChange
            status = pam_chauthtok(handle, Int32(PAM_CHANGE_EXPIRED_AUTHTOK))
            guard status == PAM_SUCCESS else {
                return status == PAM_CONV_ERR && passwordUsed ? .failure(.conversationExpired)
                    : .failure(.passwordChangeFailed(messages: messages))
            }
        } else if status != PAM_SUCCESS {
            return .failure(status == PAM_AUTHINFO_UNAVAIL ? .systemError(code: status) : .accountRefused)
        }
        // One person, one name: the name PAM settled on (pam_ldap gives the directory's spelling,
        // pam_sss the one typed), then the account's own spelling through NSS.
        let reported = pamUser(handle) ?? username
        return .success(username: AccountName.canonical(reported) ?? reported)
    }

    private func authenticationFailure(_ status: Int32) -> PAMOutcome {
        switch status {
        case PAM_AUTH_ERR, PAM_USER_UNKNOWN, PAM_MAXTRIES, PAM_CRED_INSUFFICIENT:
            return .failure(.authenticationFailed)
        // The account itself is refused, whatever the password: pam_sss answers so for an account
        // the directory has locked (ppolicy) or disabled, some modules for an expired one.
        case PAM_PERM_DENIED, PAM_ACCT_EXPIRED:
            return .failure(.accountRefused)
        case PAM_CONV_ERR, PAM_ABORT:
            return .failure(.conversationExpired)
        default:
            return .failure(.systemError(code: status))
        }
    }

    private func pamUser(_ handle: OpaquePointer) -> String? {
        var item: UnsafeRawPointer?
        guard pam_get_item(handle, PAM_USER, &item) == PAM_SUCCESS, let item else { return nil }
        return String(cString: item.assumingMemoryBound(to: CChar.self))
    }

    /// "Current password: " (pam_unix), "Current Password: " (pam_sss), "(current) UNIX password: "
    /// (older pam_unix), and the German translations, should the service run with a German locale.
    static func asksForCurrentPassword(_ prompt: String) -> Bool {
        let text = prompt.lowercased()
        return ["current", "old password", "aktuell", "altes passwort"].contains { text.contains($0) }
    }

    /// Answers one message, or nil to fail the conversation.
    fileprivate func respond(style: Int32, text: String) -> UnsafeMutablePointer<CChar>? {
        switch style {
        case PAM_PROMPT_ECHO_OFF, PAM_PROMPT_ECHO_ON:
            if style == PAM_PROMPT_ECHO_OFF, phase == .authentication, !passwordUsed {
                passwordUsed = true
                return password.mallocCopy()
            }
            // Changing an expired password, pam_unix and pam_sss first ask for the current one:
            // it is the password just verified, so the person is not asked twice.
            if style == PAM_PROMPT_ECHO_OFF, phase == .passwordChange, !currentPasswordGiven, Self.asksForCurrentPassword(text) {
                currentPasswordGiven = true
                return password.mallocCopy()
            }
            if queuedAnswers.isEmpty {
                let challenge = PAMChallenge(
                    conversationID: conversationID, phase: phase, prompt: text,
                    echo: style == PAM_PROMPT_ECHO_ON, messages: messages)
                messages = []
                guard let answers = bridge.ask(challenge, timeout: promptTimeout), !answers.isEmpty else { return nil }
                queuedAnswers = answers
            }
            passwordUsed = true
            return queuedAnswers.removeFirst().mallocCopy()
        case PAM_ERROR_MSG, PAM_TEXT_INFO:
            messages.append(text)
            return strdup("")
        default:
            return nil
        }
    }
}

/// The C conversation callback. Responses are `calloc`/`strdup`'d because PAM frees them.
private func pamConversation(
    count: Int32,
    messages: UnsafeMutablePointer<UnsafePointer<pam_message>?>?,
    responses: UnsafeMutablePointer<UnsafeMutablePointer<pam_response>?>?,
    context: UnsafeMutableRawPointer?
) -> Int32 {
    guard count > 0, let messages, let responses, let context else { return PAM_CONV_ERR }
    // On any failure PAM must find no responses (some modules read the pointer regardless).
    responses.pointee = nil
    let transaction = Unmanaged<PAMTransaction>.fromOpaque(context).takeUnretainedValue()
    guard let replies = calloc(Int(count), MemoryLayout<pam_response>.stride)?
        .bindMemory(to: pam_response.self, capacity: Int(count))
    else { return PAM_BUF_ERR }

    for index in 0..<Int(count) {
        guard let message = messages[index]?.pointee else { return fail(replies, filled: index) }
        let text = message.msg.map { String(cString: $0) } ?? ""
        guard let answer = transaction.respond(style: message.msg_style, text: text) else {
            return fail(replies, filled: index)
        }
        replies[index].resp = answer
        replies[index].resp_retcode = 0
    }
    responses.pointee = replies
    return PAM_SUCCESS
}

/// Wipes and frees what was answered so far; PAM gets nothing back.
private func fail(_ replies: UnsafeMutablePointer<pam_response>, filled: Int) -> Int32 {
    for index in 0..<filled {
        if let answer = replies[index].resp {
            explicit_bzero(answer, strlen(answer))
            free(answer)
        }
    }
    free(replies)
    return PAM_CONV_ERR
}
