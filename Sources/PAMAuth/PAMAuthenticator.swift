import Foundation
import Logging
import NIOPosix
import Synchronization

package struct PAMConfiguration: Sendable {
    /// The PAM service name, i.e. the file in /etc/pam.d.
    package var service: String
    /// Threads for PAM and NSS calls; also the most sign-ins in progress at once (a further one
    /// is told to try again rather than queued behind a slow directory).
    package var threads: Int
    /// How long a request waits for PAM before it answers "try again".
    package var responseTimeout: Duration
    /// How long a person may take to answer a prompt (a one-time code, a new password).
    package var promptTimeout: Duration

    package init(service: String, threads: Int = 16, responseTimeout: Duration = .seconds(20), promptTimeout: Duration = .seconds(180)) {
        self.service = service
        self.threads = threads
        self.responseTimeout = responseTimeout
        self.promptTimeout = promptTimeout
    }
}

/// Signs people in through PAM, off the event loops, on a bounded pool of threads.
///
/// A PAM stack that asks more than the password (a one-time code, a password change) keeps its
/// transaction open on its thread while the person answers in the next form step; the
/// conversation is found again by ``PAMChallenge/conversationID``.
package final class PAMAuthenticator: Sendable {
    package let configuration: PAMConfiguration
    private let pool: NIOThreadPool
    private let state = Mutex<State>(State())
    private let logger: Logger
    private let modules = LoadedModules()

    private struct State {
        var running = 0
        /// Sign-ins in progress (on a thread or waiting for an answer) per client address.
        var inProgress: [String: Int] = [:]
        var waiting: [String: (bridge: ConversationBridge, username: String, host: String?)] = [:]
    }

    /// Sign-ins one client address may have in progress at once: a quarter of the threads (4 of
    /// the default 16). A stack that asks a second question of anyone (a one-time code after a
    /// wrong password) lets a visitor hold a thread for the prompt timeout, so one address must
    /// never be able to take them all, nor two (IPv4 and IPv6 of one client); four at once still
    /// leave room for an office behind one NAT address.
    package var maxInProgressPerHost: Int { max(1, configuration.threads / 4) }

    package init(configuration: PAMConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.pool = NIOThreadPool(numberOfThreads: configuration.threads)
        pool.start()
    }

    /// Starts a sign-in. The password is consumed (and wiped when no longer needed).
    package func authenticate(username: String, password: SecretBytes, remoteHost: String? = nil) async -> PAMOutcome {
        guard Self.isAcceptableUsername(username) else { return .failure(.authenticationFailed) }
        // Counted at admission, released when the transaction ends: parallel requests from one
        // address cannot all slip in before any of them is counted.
        let admitted = state.withLock { state -> Bool in
            guard state.running < configuration.threads else { return false }
            if let remoteHost {
                guard state.inProgress[remoteHost, default: 0] < maxInProgressPerHost else { return false }
                state.inProgress[remoteHost, default: 0] += 1
            }
            state.running += 1
            return true
        }
        guard admitted else { return .failure(.busy) }

        let bridge = ConversationBridge()
        let conversationID = Self.newConversationID()
        let transaction = PAMTransaction(
            service: configuration.service, username: username, password: password, remoteHost: remoteHost,
            bridge: bridge, conversationID: conversationID, promptTimeout: configuration.promptTimeout,
            modules: modules)
        pool.submit { [self] workState in
            let outcome: PAMOutcome = workState == .active ? transaction.run() : .failure(.busy)
            state.withLock {
                $0.running -= 1
                $0.waiting[conversationID] = nil
                if let remoteHost {
                    $0.inProgress[remoteHost, default: 1] -= 1
                    if $0.inProgress[remoteHost] == 0 { $0.inProgress[remoteHost] = nil }
                }
            }
            bridge.deliver(outcome)
        }
        return await waitForOutcome(bridge, id: conversationID, username: username, host: remoteHost)
    }

    /// Answers the prompt of a waiting sign-in. Each challenge takes one answer: a second
    /// submission of the same step finds no conversation.
    /// Returns the username the conversation was started for ("" if none was waiting).
    package func answer(_ conversationID: String, with answers: [SecretBytes]) async -> (username: String, outcome: PAMOutcome) {
        guard let waiting = state.withLock({ $0.waiting.removeValue(forKey: conversationID) }) else {
            return ("", .failure(.conversationExpired))
        }
        waiting.bridge.provide(answers)
        return (waiting.username, await waitForOutcome(waiting.bridge, id: conversationID, username: waiting.username, host: waiting.host))
    }

    /// The username a waiting sign-in was started for, nil if none waits under that id.
    package func username(ofWaiting conversationID: String) -> String? {
        state.withLock { $0.waiting[conversationID]?.username }
    }

    /// Ends a waiting sign-in (the person went back to the start) and waits until its PAM
    /// transaction has ended (a few seconds at most): a sign-in started right after it finds the
    /// thread and the address's slot free again instead of being told PAM is busy.
    package func cancel(_ conversationID: String) async {
        guard let waiting = state.withLock({ $0.waiting.removeValue(forKey: conversationID) }) else { return }
        waiting.bridge.abandon()
        // The pool job releases the thread and the slot before it delivers the final outcome.
        _ = await waiting.bridge.nextOutcome(timeout: .seconds(5))
    }

    /// Whether a shared object PAM loaded stays loaded for the process's life; for tests.
    package func keepsLoaded(_ path: String) -> Bool { modules.isPinned(path) }

    /// Sign-ins currently waiting for an answer; for metrics and tests.
    package var waitingConversations: Int { state.withLock { $0.waiting.count } }

    package func shutdown() async {
        let waiting = state.withLock { state in
            defer { state.waiting = [:] }
            return state.waiting.values.map(\.bridge)
        }
        waiting.forEach { $0.abandon() }
        try? await pool.shutdownGracefully()
    }

    /// The directory did not answer a lookup within ``PAMConfiguration/responseTimeout``.
    package struct TimedOut: Error {}

    /// Runs blocking lookups (NSS group resolution) on the same bounded pool, waiting at most
    /// ``PAMConfiguration/responseTimeout``: the directory behind NSS can hang like the one behind
    /// PAM. A lookup that hangs keeps its thread until it returns; the request stops waiting for it.
    package func runBlocking<T: Sendable>(_ body: @Sendable @escaping () throws -> T) async throws -> T {
        let pool = pool
        let timeout = configuration.responseTimeout
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let once = ResumeOnce(continuation)
            let timer = Task {
                try await Task.sleep(for: timeout)
                once.resume(with: .failure(TimedOut()))
            }
            Task {
                do { once.resume(with: .success(try await pool.runIfActive(body))) } catch { once.resume(with: .failure(error)) }
                timer.cancel()
            }
        }
    }

    /// Resumes a continuation with whichever result comes first.
    private final class ResumeOnce<T: Sendable>: Sendable {
        private let continuation: Mutex<CheckedContinuation<T, any Error>?>
        init(_ continuation: CheckedContinuation<T, any Error>) { self.continuation = Mutex(continuation) }
        func resume(with result: Result<T, any Error>) {
            continuation.withLock { stored in
                defer { stored = nil }
                return stored
            }?.resume(with: result)
        }
    }

    private func waitForOutcome(_ bridge: ConversationBridge, id: String, username: String, host: String?) async -> PAMOutcome {
        let outcome = await bridge.nextOutcome(timeout: configuration.responseTimeout)
        if case .challenge = outcome {
            state.withLock { $0.waiting[id] = (bridge, username, host) }
        }
        if case .failure(.timedOut) = outcome {
            logger.warning("PAM did not answer in time", metadata: ["service": "\(configuration.service)"])
        }
        return outcome
    }


    package static func isAcceptableUsername(_ username: String) -> Bool {
        !username.isEmpty && username.utf8.count <= 256 && !username.unicodeScalars.contains(where: isHidden)
    }

    /// Control characters, and the invisible ones that change how a name reads without showing:
    /// format characters (zero-width characters and marks U+200B–U+200F, bidirectional
    /// embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069, the byte-order mark
    /// U+FEFF, the soft hyphen, word joiners, tags), every other default-ignorable code point
    /// (variation selectors, Hangul fillers) and line and paragraph separators. No account name
    /// holds them; in the audit trail they would make one name look like another.
    package static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        switch properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: return true
        default: return properties.isDefaultIgnorableCodePoint
        }
    }

    static func newConversationID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(generator.next(), radix: 16) }.joined(separator: "-")
    }
}
