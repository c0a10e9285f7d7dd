import Foundation

/// Hands events between the thread that runs a PAM transaction (and blocks inside the PAM
/// conversation while a person types) and the async request handlers that drive it.
///
/// PAM thread: ``deliver(_:)`` an outcome, or ``ask(_:timeout:)`` a question and block for the
/// answer. Request side: ``nextOutcome(timeout:)`` and ``provide(_:)``.
final class ConversationBridge: @unchecked Sendable {
    private let condition = NSCondition()
    private var waiter: CheckedContinuation<PAMOutcome, Never>?
    private var buffered: PAMOutcome?
    private var answers: [SecretBytes]?
    private var abandoned = false
    private var finished = false
    /// Counts waiters, so a timer only ever expires the waiter it was started for.
    private var generation = 0

    // MARK: PAM thread side

    /// Passes an outcome to whoever waits for it (or keeps it for the next waiter).
    func deliver(_ outcome: PAMOutcome) {
        condition.lock()
        if case .challenge = outcome {} else { finished = true }
        let continuation = waiter
        waiter = nil
        if continuation == nil { buffered = outcome }
        condition.unlock()
        continuation?.resume(returning: outcome)
    }

    /// Shows `challenge` to the person and blocks until they answer, the conversation is
    /// abandoned, or `timeout` passes (then nil, and the PAM module sees a conversation error).
    /// A timeout abandons the whole conversation: a module that asks again (a retrying password
    /// module) gets nil at once, so the thread is held for one prompt timeout at most, and a late
    /// answer can never reach a prompt the person did not see.
    func ask(_ challenge: PAMChallenge, timeout: Duration) -> [SecretBytes]? {
        condition.lock()
        let alreadyAbandoned = abandoned
        condition.unlock()
        if alreadyAbandoned { return nil }
        deliver(.challenge(challenge))
        let deadline = Date().addingTimeInterval(Double(timeout.components.seconds))
        condition.lock()
        defer { condition.unlock() }
        while answers == nil && !abandoned {
            if !condition.wait(until: deadline) {
                abandoned = true
                break
            }
        }
        defer { answers = nil }
        return abandoned ? nil : answers
    }

    // MARK: Request side

    /// Waits for the transaction's next outcome. If PAM does not produce one within `timeout`
    /// (a hanging directory server), the request gets `.timedOut` and the transaction is
    /// abandoned; its thread finishes whenever PAM returns.
    func nextOutcome(timeout: Duration) async -> PAMOutcome {
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<PAMOutcome, Never>) in
            condition.lock()
            if let ready = buffered {
                buffered = nil
                condition.unlock()
                continuation.resume(returning: ready)
                return
            }
            waiter = continuation
            generation += 1
            let mine = generation
            condition.unlock()
            DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(Int(timeout.components.seconds))) { [weak self] in
                self?.expireWaiter(generation: mine)
            }
        }
        return outcome
    }

    private func expireWaiter(generation expired: Int) {
        condition.lock()
        // Only if the waiter this timer belongs to is still waiting.
        guard let continuation = waiter, generation == expired else { condition.unlock(); return }
        waiter = nil
        abandoned = true
        condition.broadcast()
        condition.unlock()
        continuation.resume(returning: .failure(.timedOut))
    }

    /// Answers the question PAM is waiting on.
    func provide(_ newAnswers: [SecretBytes]) {
        condition.lock()
        answers = newAnswers
        condition.broadcast()
        condition.unlock()
    }

    /// Ends a waiting conversation: the blocked PAM thread gets a conversation error.
    func abandon() {
        condition.lock()
        abandoned = true
        condition.broadcast()
        condition.unlock()
    }
}
