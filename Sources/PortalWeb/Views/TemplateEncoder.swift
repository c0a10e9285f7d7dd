import Mustache

/// A model as a template reads it: its stored properties by name, then the values it derives.
final class TemplateObject: MustacheParent {
    fileprivate(set) var values: [String: Any] = [:]
    /// The model, for ``TemplateValues/derivedValue(named:)``; nil for a nested `Encodable` that
    /// is not a model of its own.
    let model: (any TemplateValues)?

    init(model: (any TemplateValues)?) {
        self.model = model
    }

    func child(named name: String) -> Any? {
        if let value = values[name] { return value }
        return model?.derivedValue(named: name).mustacheValue
    }
}

/// Turns a model into what swift-mustache reads, once per render: a model or any keyed value
/// becomes a ``TemplateObject``, a list an array, text a ``TemplateText``, a nil a ``NoValue``
/// (a declared nil renders empty and does not fall back to an enclosing model's value).
enum TemplateEncoder {
    /// A page model for its render; throws what a model's own `encode(to:)` throws (the
    /// compiler's never does), so the page becomes the 500 page with the error logged.
    static func page(_ model: some TemplateValues) throws -> TemplateObject {
        try value(model) as? TemplateObject ?? TemplateObject(model: model)
    }

    /// A model a derived value returns: as ``page(_:)``, and an empty value should its encoding fail.
    static func object(_ model: some TemplateValues) -> Any {
        (try? value(model)) ?? NoValue()
    }

    static func value<T: Encodable>(_ value: T) throws -> Any {
        if let primitive = primitive(value) { return primitive }
        let encoder = ValueEncoder(model: value as? any TemplateValues)
        try value.encode(to: encoder)
        return encoder.result
    }

    /// Text, flags and numbers as Mustache shows them. Every other number type and `Date` encode
    /// themselves as one of these through a single-value container, so they end here too.
    fileprivate static func primitive(_ value: Any) -> Any? {
        switch value {
        case let text as String: TemplateText(text: text)
        case let flag as Bool: flag
        case let number as Int: number
        case let number as any BinaryInteger: TemplateText(text: "\(number)")
        case let number as Double: number
        case let number as Float: Double(number)
        default: nil
        }
    }
}

private final class ValueEncoder: Encoder {
    let model: (any TemplateValues)?
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    private var object: TemplateObject?
    private var list: ListStorage?
    fileprivate var single: Any?

    init(model: (any TemplateValues)?) {
        self.model = model
    }

    var result: Any { object ?? list.map { $0.items as Any } ?? single ?? NoValue() }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let object = object ?? TemplateObject(model: model)
        self.object = object
        return KeyedEncodingContainer(ObjectContainer(object: object))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let list = list ?? ListStorage()
        self.list = list
        return ListContainer(storage: list)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleContainer(encoder: self) }
}

fileprivate final class ListStorage {
    /// Called with the items after every change, for a list stored in an object while it fills.
    var onChange: (([Any]) -> Void)?
    var items: [Any] = [] {
        didSet { onChange?(items) }
    }
}

private struct ObjectContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let object: TemplateObject
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) { object.values[key.stringValue] = NoValue() }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        object.values[key.stringValue] = try TemplateEncoder.value(value)
    }

    // The compiler's `encode(to:)` skips a nil optional through these; a template must see it
    // as an empty value of this model, not look the name up further out.
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws { try encodeOptional(value, forKey: key) }

    private mutating func encodeOptional<T: Encodable>(_ value: T?, forKey key: Key) throws {
        guard let value else { return encodeNil(forKey: key) }
        try encode(value, forKey: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let nested = TemplateObject(model: nil)
        object.values[key.stringValue] = nested
        return KeyedEncodingContainer(ObjectContainer<NestedKey>(object: nested))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        // Filled after it is stored: each change is written into the object, so that a lookup
        // stays a plain dictionary read.
        let storage = ListStorage()
        let object = object, name = key.stringValue
        object.values[name] = [Any]()
        storage.onChange = { object.values[name] = $0 }
        return ListContainer(storage: storage)
    }

    mutating func superEncoder() -> any Encoder { ValueEncoder(model: nil) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { ValueEncoder(model: nil) }
}

private struct ListContainer: UnkeyedEncodingContainer {
    let storage: ListStorage
    var codingPath: [any CodingKey] { [] }
    var count: Int { storage.items.count }

    mutating func encodeNil() { storage.items.append(NoValue()) }
    mutating func encode<T: Encodable>(_ value: T) throws { storage.items.append(try TemplateEncoder.value(value)) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = TemplateObject(model: nil)
        storage.items.append(nested)
        return KeyedEncodingContainer(ObjectContainer<NestedKey>(object: nested))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        // Lists of lists: no page has one.
        ListContainer(storage: ListStorage())
    }

    mutating func superEncoder() -> any Encoder { ValueEncoder(model: nil) }
}

private struct SingleContainer: SingleValueEncodingContainer {
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() { encoder.single = NoValue() }
    mutating func encode<T: Encodable>(_ value: T) throws {
        // A primitive encodes itself through this container: taking it as it is ends the recursion.
        encoder.single = try TemplateEncoder.primitive(value) ?? TemplateEncoder.value(value)
    }
}
