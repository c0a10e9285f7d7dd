/// Why no teleTAN was issued, for the page that says so.
package enum IssuanceError: Error, Equatable {
    /// A limit was hit; `global` tells the service-wide limit from the officer's own.
    case tooManyRequests(retryAfterSeconds: Int, global: Bool)
    /// Today's quota (the portal's, or the health authority's) is used up until midnight, unless
    /// an administrator raises it.
    case dailyQuotaReached(retryAfterSeconds: Int)
    /// The verification service did not confirm a teleTAN.
    case serviceUnavailable
    /// The verification server refused the portal's credentials (its token or its client
    /// certificate): a setting of the portal (or its clock) to be fixed by the operator, not by
    /// trying again.
    case serviceRefusedCredentials
}
