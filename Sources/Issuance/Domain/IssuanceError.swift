/// Why no teleTAN was issued, for the page that says so.
package enum IssuanceError: Error, Equatable {
    /// A limit was hit; `global` tells the service-wide limit from the officer's own.
    case tooManyRequests(retryAfterSeconds: Int, global: Bool)
    /// The verification service did not confirm a teleTAN.
    case serviceUnavailable
}
