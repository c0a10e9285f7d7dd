/// The two kinds of teleTAN the CWA verification server knows, with their validity.
package enum TeleTANType: String, Sendable, Codable, CaseIterable {
    /// Positive PCR test; a security review of CWA cut validity to one hour.
    case test = "TEST"
    /// Confirmed infection at an event ("PIW TAN"); valid two days.
    case event = "EVENT"

    package var validity: Duration {
        switch self {
        case .test: .seconds(60 * 60)
        case .event: .seconds(2 * 24 * 60 * 60)
        }
    }
}
