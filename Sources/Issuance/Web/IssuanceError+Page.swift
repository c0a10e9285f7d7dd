import HTTPTypes
import PortalWeb

extension IssuanceError: UserFacingError {
    package var status: HTTPResponse.Status {
        switch self {
        case .tooManyRequests, .dailyQuotaReached: .tooManyRequests
        case .serviceUnavailable, .serviceRefusedCredentials: .serviceUnavailable
        }
    }

    package var retryAfterSeconds: Int? {
        switch self {
        case .tooManyRequests(let seconds, _), .dailyQuotaReached(let seconds): seconds
        case .serviceUnavailable: 30
        // Waiting does not help; the operator must change a setting.
        case .serviceRefusedCredentials: nil
        }
    }

    package func message(_ renderer: PageRenderer, in language: Language) -> String? {
        switch self {
        case .tooManyRequests(let seconds, let global):
            renderer.text(global ? "error_429_global" : "error_429", in: language,
                          ["wait": DurationText.text(seconds: seconds, in: language)])
        case .dailyQuotaReached:
            renderer.text("error_429_daily_quota", in: language)
        case .serviceUnavailable:
            nil
        case .serviceRefusedCredentials:
            renderer.text("error_503_credentials_refused", in: language)
        }
    }
}
