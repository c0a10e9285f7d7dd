import HTTPTypes
import PortalWeb

extension IssuanceError: UserFacingError {
    package var status: HTTPResponse.Status {
        switch self {
        case .tooManyRequests: .tooManyRequests
        case .serviceUnavailable, .serviceRefusedToken: .serviceUnavailable
        }
    }

    package var retryAfterSeconds: Int? {
        switch self {
        case .tooManyRequests(let seconds, _): seconds
        case .serviceUnavailable: 30
        // Waiting does not help; the operator must change a setting.
        case .serviceRefusedToken: nil
        }
    }

    package func message(_ renderer: PageRenderer, in language: Language) -> String? {
        switch self {
        case .tooManyRequests(let seconds, let global):
            renderer.text(global ? "error_429_global" : "error_429", in: language,
                          ["wait": DurationText.text(seconds: seconds, in: language)])
        case .serviceUnavailable:
            nil
        case .serviceRefusedToken:
            renderer.text("error_503_token_refused", in: language)
        }
    }
}
