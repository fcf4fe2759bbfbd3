/// One named parameter of an event.
public struct EventParameter: Sendable, Hashable {
  /// The parameter's key, e.g. `product_id`.
  public var key: String
  /// The parameter's typed value.
  public var value: ParameterValue
  /// Whether the value is personal data; the privacy stage drops or hashes such values before any
  /// service sees them.
  public var isPersonal: Bool

  /// Creates a parameter.
  public init(key: String, value: ParameterValue, isPersonal: Bool = false) {
    self.key = key
    self.value = value
    self.isPersonal = isPersonal
  }
}

/// The ordered parameters of an event: the one uniform serialisation every service starts from.
///
/// Order is the order of declaration, so services and test assertions see `(key, value)` pairs in a
/// stable order. Keys are unique: setting an existing key replaces its value in place.
///
/// ```swift
/// var parameters: EventParameters = ["product_id": "42", "price": 19.99]
/// parameters["quantity"] = 2
/// parameters.append(personal: "email", .string(email))   // dropped or hashed by the privacy stage
/// ```
public struct EventParameters: Sendable, Hashable {
  @usableFromInline var storage: [EventParameter]

  /// No parameters.
  public init() { storage = [] }

  /// Parameters from a list; a later duplicate key replaces the earlier value.
  public init(_ parameters: some Sequence<EventParameter>) {
    storage = []
    for parameter in parameters { set(parameter) }
  }

  /// Parameters whose keys the caller knows to be distinct (no look-up per key).
  init(distinct parameters: [EventParameter]) { storage = parameters }

  /// The keys in order.
  public var keys: [String] { storage.map(\.key) }

  /// The `(key, value)` pairs in order, the shape test assertions compare.
  public var pairs: [(key: String, value: ParameterValue)] { storage.map { ($0.key, $0.value) } }

  /// The value for `key`, or `nil`; setting `nil` removes the key.
  public subscript(key: String) -> ParameterValue? {
    get { storage.first { $0.key == key }?.value }
    set {
      if let newValue {
        set(EventParameter(key: key, value: newValue))
      } else {
        storage.removeAll { $0.key == key }
      }
    }
  }

  /// Adds a parameter at the end, or replaces the value of an existing key in place.
  public mutating func set(_ parameter: EventParameter) {
    if let index = storage.firstIndex(where: { $0.key == parameter.key }) {
      storage[index] = parameter
    } else {
      storage.append(parameter)
    }
  }

  /// Adds (or replaces) a parameter that is personal data.
  public mutating func append(personal key: String, _ value: ParameterValue) {
    set(EventParameter(key: key, value: value, isPersonal: true))
  }

  /// Adds the parameters of `defaults` whose keys are not present yet, after the existing ones.
  ///
  /// The event's own values win: this is how default parameters (super properties) are applied.
  public mutating func addMissing(from defaults: EventParameters) {
    guard !defaults.isEmpty else { return }
    storage.reserveCapacity(storage.count + defaults.count)
    for parameter in defaults.storage where !storage.contains(where: { $0.key == parameter.key }) {
      storage.append(parameter)
    }
  }

  /// These parameters followed by `other`'s; on equal keys `other`'s value wins, in place.
  public func merging(_ other: EventParameters) -> EventParameters {
    var result = self
    for parameter in other.storage { result.set(parameter) }
    return result
  }

  /// Rewrites every parameter in place; returning `nil` removes it.
  public mutating func rewrite(_ transform: (EventParameter) -> EventParameter?) {
    var result: [EventParameter] = []
    result.reserveCapacity(storage.count)
    for parameter in storage {
      if let rewritten = transform(parameter) { result.append(rewritten) }
    }
    storage = result
  }
}

extension EventParameters: RandomAccessCollection {
  public var startIndex: Int { storage.startIndex }
  public var endIndex: Int { storage.endIndex }
  public subscript(position: Int) -> EventParameter { storage[position] }
}

extension EventParameters: ExpressibleByDictionaryLiteral {
  /// Parameters from a literal, in the literal's order.
  public init(dictionaryLiteral elements: (String, ParameterValue)...) {
    storage = []
    storage.reserveCapacity(elements.count)
    for (key, value) in elements { set(EventParameter(key: key, value: value)) }
  }
}

extension EventParameters: CustomStringConvertible {
  public var description: String {
    "[" + storage.map { "\($0.key): \($0.value)\($0.isPersonal ? " (personal)" : "")" }.joined(separator: ", ") + "]"
  }
}
