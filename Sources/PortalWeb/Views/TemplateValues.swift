import Mustache

/// A value a template can show: text, a number, a flag, a list, a nested model, or one of them
/// that may be missing. Only these reach swift-mustache, so a template never meets a type it
/// would render with `String(describing:)` or read by reflection.
package protocol TemplateValue {
    /// What swift-mustache is handed for it; nil only for ``Undeclared``.
    var mustacheValue: Any? { get }
}

/// A model a template reads by name: a page, or a part of one (a form, a row of a list).
///
/// Each model answers `value(named:)` with a `switch` over the names its templates use, so a
/// lookup costs a few string comparisons, never reflection: swift-mustache reads any other type
/// with `Mirror`, once per lookup, which a profile found at 6-10 % of the portal's CPU. (A list
/// of key paths would read the same values, but a key path lookup costs more than a `switch`,
/// and a dictionary built per render allocates for every value.) A computed value (a flag
/// derived from a list, a form's field) is a case like any other. `TemplateTests` renders every
/// template in checking mode and fails on a name that no case answers.
package protocol TemplateValues: TemplateValue, MustacheParent, Sendable {
    /// The value a template's `name` stands for; `.undeclared` for a name this model does not
    /// have, which Mustache then looks up in the enclosing model. A declared optional that is nil
    /// is a value (it renders empty and is false) and does not fall back.
    ///
    /// The result is not an optional on purpose: a nil `String?` returned as `(any TemplateValue)?`
    /// would become nil, and an undeclared name, not an empty value.
    func value(named name: String) -> any TemplateValue
}

extension TemplateValues {
    package var mustacheValue: Any? { self }
    package func child(named name: String) -> Any? { value(named: name).mustacheValue }
}

/// The answer for a name a model does not have (`default: .undeclared`).
package struct Undeclared: TemplateValue {
    package var mustacheValue: Any? { nil }
}

extension TemplateValue where Self == Undeclared {
    package static var undeclared: Undeclared { Undeclared() }
}

/// A declared value that is nil: empty as a variable, false as a section. Mustache would look a
/// nil value up in the enclosing context instead (a nested form's empty field would show the
/// page's value of the same name), so nil is never handed to it for a name a model declares.
struct NoValue: MustacheCustomRenderable {
    var renderText: String { "" }
    var isNull: Bool { true }
}

/// Text, wrapped so that a section on it (`{{#notice}}{{notice}}{{/notice}}`) does not make
/// Mustache reflect on a `String` to look the inner name up: it answers no names itself.
struct TemplateText: MustacheCustomRenderable, MustacheParent {
    let text: String
    var renderText: String { text }
    var isNull: Bool { false }
    func child(named: String) -> Any? { nil }
}

extension String: TemplateValue {
    package var mustacheValue: Any? { TemplateText(text: self) }
}

extension Int: TemplateValue {
    package var mustacheValue: Any? { self }
}

extension Bool: TemplateValue {
    package var mustacheValue: Any? { self }
}

extension Array: TemplateValue where Element: TemplateValue {
    // Rows are models (read by name) and strings are shown with `{{.}}`: the array as it is.
    package var mustacheValue: Any? { self }
}

extension Optional: TemplateValue where Wrapped: TemplateValue {
    package var mustacheValue: Any? {
        guard let self else { return NoValue() }
        return self.mustacheValue
    }
}
