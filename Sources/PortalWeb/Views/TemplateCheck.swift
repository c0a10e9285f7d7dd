import Mustache

/// The renderer's checking mode, for tests: records every name a template uses that nothing
/// answered, neither the model, nor an enclosing one, nor the shared values (`TemplateTests`).
///
/// It wraps each model a lookup returns in a ``Recorder`` that sees the lookups Mustache makes.
/// Mustache looks the first part of a name up from the innermost model outwards and stops at
/// the first that has it, so a miss there is only final at the page itself (the outermost); a
/// further part (`form.actor`) is looked up only in what the first part found, so a miss on a
/// model just returned is final unless the next lookup asks the same name further out (then
/// the model had been entered as a section, and Mustache goes on looking).
package final class TemplateCheck: @unchecked Sendable {
    /// Names nothing answered, as `outer.inner` paths.
    package private(set) var unresolved: [String] = []
    private var lastReturned: Recorder?
    private var pending: (name: String, path: String, in: Recorder)?

    package init() {}

    func root(_ page: any MustacheParent) -> Recorder { Recorder(page, path: "", isRoot: true, check: self) }

    /// Called by Mustache's lookups through the recorders.
    fileprivate func lookup(_ name: String, in recorder: Recorder) -> Any? {
        if let waiting = pending {
            pending = nil
            // Not the same name looked up further out: the miss was final.
            if waiting.name != name || waiting.in === recorder { unresolved.append(waiting.path) }
        }
        let justReturned = lastReturned === recorder
        lastReturned = nil
        guard let found = recorder.wrapped.child(named: name) else {
            if recorder.isRoot {
                unresolved.append(recorder.path + name)
            } else if justReturned {
                pending = (name, recorder.path + name, recorder)
            }
            return nil
        }
        let value = wrap(found, path: recorder.path + name + ".")
        lastReturned = value as? Recorder
        return value
    }

    /// The end of a render: a miss still waiting for the next lookup was final.
    func finish() {
        if let waiting = pending { unresolved.append(waiting.path) }
        pending = nil
        lastReturned = nil
    }

    private func wrap(_ value: Any, path: String) -> Any {
        if value is TemplateText { return value }
        if let parent = value as? any MustacheParent { return Recorder(parent, path: path, isRoot: false, check: self) }
        if let rows = value as? [Any] { return rows.map { wrap($0, path: path) } }
        return value
    }

    final class Recorder: MustacheParent {
        let wrapped: any MustacheParent
        let path: String
        let isRoot: Bool
        unowned let check: TemplateCheck

        init(_ wrapped: any MustacheParent, path: String, isRoot: Bool, check: TemplateCheck) {
            self.wrapped = wrapped
            self.path = path
            self.isRoot = isRoot
            self.check = check
        }

        func child(named name: String) -> Any? { check.lookup(name, in: self) }
    }
}
