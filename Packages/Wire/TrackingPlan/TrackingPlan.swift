/// One version of an app's tracking plan: the events the app may send, each with its parameters'
/// types, whether they are required, their allowed values or range, and who owns them.
///
/// A plan is a YAML (or JSON) file in the repository, one per product (`Plans/ty.yaml`), decoded
/// through `Codable`. The collector holds every version it is given (an old app version keeps
/// sending the events of the plan it was built with) and checks each event against them
/// (``TrackingPlans``).
public struct TrackingPlan: Sendable, Hashable, Codable {
  /// The app whose events it describes (the write key's app, without an environment).
  public var app: String
  /// The plan's version: raise it with every change.
  public var version: Int
  /// What the collector does with an event that breaks the plan.
  public var mode: Mode
  /// The events, by name.
  public var events: [String: Event]
  /// Parameters any event may carry (super properties, a product's default parameters such as
  /// `product`), checked wherever they appear.
  public var common: [Parameter]

  /// A plan.
  public init(app: String, version: Int, mode: Mode = .enforce, events: [String: Event], common: [Parameter] = []) {
    self.app = app
    self.version = version
    self.mode = mode
    self.events = events
    self.common = common
  }

  enum CodingKeys: String, CodingKey { case app, version, mode, events, common }

  /// Decodes a plan; `mode` defaults to `enforce`.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    app = try container.decode(String.self, forKey: .app)
    version = try container.decode(Int.self, forKey: .version)
    mode = try container.decodeIfPresent(Mode.self, forKey: .mode) ?? .enforce
    events = try container.decodeIfPresent([String: Event].self, forKey: .events) ?? [:]
    common = try container.decodeIfPresent([Parameter].self, forKey: .common) ?? []
  }

  /// What happens to an event that breaks the plan.
  public enum Mode: String, Sendable, Hashable, Codable {
    /// Kept in the quarantine with the plan's version and the reason, until a replay under a fixed
    /// plan stores it.
    case enforce
    /// Stored, and counted and logged as a violation.
    case warn
  }

  /// One event of the plan.
  public struct Event: Sendable, Hashable, Codable {
    /// `screen`, `action` or `event` (the native kind: `screen_view`, `action`, `event`).
    public var kind: String?
    /// What it means, for the people who read the reports.
    public var description: String?
    /// The team that owns it.
    public var owner: String?
    /// The services that receive it (`collector`, `firebase`, `mixpanel`, ...); all when absent.
    public var services: [String]?
    /// Its parameters, in the order events carry them. A key not listed is a violation.
    public var parameters: [Parameter]

    /// An event.
    public init(
      kind: String? = nil, description: String? = nil, owner: String? = nil, services: [String]? = nil,
      parameters: [Parameter] = []
    ) {
      self.kind = kind
      self.description = description
      self.owner = owner
      self.services = services
      self.parameters = parameters
    }

    enum CodingKeys: String, CodingKey { case kind, description, owner, services, parameters }

    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      kind = try container.decodeIfPresent(String.self, forKey: .kind)
      description = try container.decodeIfPresent(String.self, forKey: .description)
      owner = try container.decodeIfPresent(String.self, forKey: .owner)
      services = try container.decodeIfPresent([String].self, forKey: .services)
      parameters = try container.decodeIfPresent([Parameter].self, forKey: .parameters) ?? []
    }

    /// The parameter with key `name`, if the plan lists it.
    public func parameter(named name: String) -> Parameter? { parameters.first { $0.name == name } }
  }

  /// One parameter of an event.
  public struct Parameter: Sendable, Hashable, Codable {
    /// Its key (`product_id`).
    public var name: String
    /// Its type.
    public var type: ValueType
    /// Whether every event must carry it (default: optional).
    public var required: Bool
    /// The values it may take (text or numbers as written), when listed.
    public var values: [String]?
    /// The smallest number it may be.
    public var minimum: Double?
    /// The largest number it may be.
    public var maximum: Double?
    /// What it means.
    public var description: String?
    /// Whether it is personal data (the privacy stage drops or hashes it).
    public var personal: Bool

    /// A parameter.
    public init(
      _ name: String, type: ValueType, required: Bool = false, values: [String]? = nil, minimum: Double? = nil,
      maximum: Double? = nil, description: String? = nil, personal: Bool = false
    ) {
      self.name = name
      self.type = type
      self.required = required
      self.values = values
      self.minimum = minimum
      self.maximum = maximum
      self.description = description
      self.personal = personal
    }

    enum CodingKeys: String, CodingKey { case name, type, required, values, minimum, maximum, description, personal }

    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      name = try container.decode(String.self, forKey: .name)
      type = try container.decode(ValueType.self, forKey: .type)
      required = try container.decodeIfPresent(Bool.self, forKey: .required) ?? false
      values = try container.decodeIfPresent([String].self, forKey: .values)
      minimum = try container.decodeIfPresent(Double.self, forKey: .minimum)
      maximum = try container.decodeIfPresent(Double.self, forKey: .maximum)
      description = try container.decodeIfPresent(String.self, forKey: .description)
      personal = try container.decodeIfPresent(Bool.self, forKey: .personal) ?? false
    }
  }

  /// A parameter's type, as the native wire carries it.
  public enum ValueType: String, Sendable, Hashable, Codable, CaseIterable {
    /// Text (dates are ISO 8601 text on the wire).
    case string
    /// A whole number.
    case integer
    /// Any number.
    case number
    /// `true` or `false`.
    case boolean
    /// A list.
    case list
    /// An object (one element of `items`).
    case object
  }
}
