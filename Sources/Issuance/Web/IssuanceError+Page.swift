import HTTPTypes
import PortalWeb

extension IssuanceError: UserFacingError {
    package var status: HTTPResponse.Status {
        switch self {
        case .tooManyRequests: .tooManyRequests
        case .serviceUnavailable: .serviceUnavailable
        }
    }

    package var retryAfterSeconds: Int? {
        switch self {
        case .tooManyRequests(let seconds, _): seconds
        case .serviceUnavailable: 30
        }
    }

    package func message(_ renderer: PageRenderer, in language: Language) -> String? {
        switch self {
        case .tooManyRequests(let seconds, let global):
            renderer.text(global ? "error_429_global" : "error_429", in: language,
                          ["wait": DurationText.text(seconds: seconds, in: language)])
        case .serviceUnavailable:
            nil
        }
    }
}
