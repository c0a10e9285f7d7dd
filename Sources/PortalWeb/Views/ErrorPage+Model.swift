import HTTPTypes

extension ErrorPage {
    /// The error page for `status`: the error's own message, else the status's text in `language`.
    init(status: HTTPResponse.Status, message: String?, renderer: PageRenderer, language: Language) {
        self.init(status: status.code, message: message ?? renderer.text("error_\(status.code)", in: language))
    }
}
