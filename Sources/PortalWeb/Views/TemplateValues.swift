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
/// Its stored properties are what the template reads, through the `Encodable` conformance the
/// compiler writes: the renderer encodes the page once per render into ``TemplateObject``s
/// (``TemplateEncoder``), whose lookups are dictionary reads. swift-mustache would read any other
/// type with `Mirror`, once per lookup, which a profile found at 6-10 % of the portal's CPU; and
/// no name is written twice. A value computed from the stored ones (a flag derived from a list,
/// a form's error flags) is answered by ``derivedValue(named:)``. `TemplateTests` renders every
/// template in checking mode and fails on a name that the model does not answer.
package protocol TemplateValues: TemplateValue, Encodable, Sendable {
    /// A value derived from the stored properties, for a template's `name`; `.undeclared` for a
    /// name this model does not derive, which Mustache then looks up in the enclosing model.
    ///
    /// The result is not an optional on purpose: a nil `String?` returned as `(any TemplateValue)?`
    /// would become nil, and an undeclared name, not an empty value.
    func derivedValue(named name: String) -> any TemplateValue
}

extension TemplateValues {
    package func derivedValue(named name: String) -> any TemplateValue { .undeclared }
    package var mustacheValue: Any? { TemplateEncoder.object(self) }
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
    package var mustacheValue: Any? { map { $0.mustacheValue ?? NoValue() } }
}

extension Optional: TemplateValue where Wrapped: TemplateValue {
    package var mustacheValue: Any? {
        guard let self else { return NoValue() }
        return self.mustacheValue
    }
}
