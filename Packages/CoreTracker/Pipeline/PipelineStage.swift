/// One step of the tracker's pipeline: looks at an event, may rewrite it, keeps or drops it.
///
/// The tracker runs its stages in order on its worker (never on the caller's thread) after
/// enrichment and consent: sampling, validation, the app's own stages, then privacy scrubbing.
/// A stage that drops an event names the reason; the tracker counts it in ``TrackerStats/dropped``.
///
/// ```swift
/// /// Drops internal QA events in release builds.
/// struct DropQAEvents: PipelineStage {
///   func process(_ event: inout TrackedEvent) -> StageDecision {
///     event.name.hasPrefix("qa_") ? .drop(DropReason("qa_event")) : .keep
///   }
/// }
/// ```
///
/// Stages are `Sendable` values; one that keeps state across events protects it itself.
public protocol PipelineStage: Sendable {
  /// Processes one event: rewrite it in place and return ``StageDecision/keep``, or return
  /// ``StageDecision/drop(_:)``.
  func process(_ event: inout TrackedEvent) -> StageDecision
}

/// What a ``PipelineStage`` decided.
public enum StageDecision: Sendable, Hashable {
  /// Pass the (possibly rewritten) event on.
  case keep
  /// Drop the event; the tracker counts it under `reason`.
  case drop(DropReason)
}

/// Sampling by event name: keeps a share of each named event, deterministically.
///
/// The decision is a pure function of the event id (or the anonymous id, with
/// ``Unit/device``) and the name, so the same event is always decided the same way, and with
/// ``Unit/device`` one device sends all or none of an event (unique counts stay right).
public struct SamplingStage: PipelineStage {
  /// What one sampling decision covers.
  public enum Unit: Sendable, Hashable {
    /// Each event is kept or not on its own.
    case event
    /// A device keeps all or none of a sampled event.
    case device
  }

  /// The share kept per event name, from 0 (none) to 1 (all).
  public var rates: [String: Double]
  /// The share kept of events not named in ``rates``.
  public var defaultRate: Double
  /// What one decision covers.
  public var unit: Unit

  /// Creates a sampling stage. Rates outside 0...1 are clamped.
  public init(rates: [String: Double] = [:], defaultRate: Double = 1, unit: Unit = .event) {
    self.rates = rates.mapValues { min(1, max(0, $0)) }
    self.defaultRate = min(1, max(0, defaultRate))
    self.unit = unit
  }

  /// Whether `event` is kept.
  public func keeps(_ event: TrackedEvent) -> Bool {
    let rate = rates[event.name] ?? defaultRate
    if rate >= 1 { return true }
    if rate <= 0 { return false }
    let seed: UInt64 =
      switch unit {
      case .event: event.id.low ^ event.id.high
      case .device: Hashing.fnv1a(event.anonymousID)
      }
    let hash = Hashing.mix(Hashing.fnv1a(event.name, seed: seed))
    return Double(hash >> 11) / Double(1 << 53) < rate
  }

  public func process(_ event: inout TrackedEvent) -> StageDecision {
    keeps(event) ? .keep : .drop(.sampledOut)
  }
}

/// Privacy scrubbing: personal data never reaches a service in the clear.
///
/// A parameter is personal when it was declared so (``EventParameters/append(personal:_:)``) or
/// its key is in ``personalKeys``. Such parameters are dropped, or replaced by a salted SHA-256
/// hex digest (a pseudonym that still counts unique values). Keys inside objects, at any depth, are
/// personal the same way (declared inside the object, or named in ``personalKeys``). User properties
/// are scrubbed too.
public struct PrivacyStage: PipelineStage {
  /// What happens to a personal value.
  public enum Action: Sendable, Hashable {
    /// Remove the parameter.
    case drop
    /// Replace the value with the SHA-256 hex digest of `salt` + the value's text.
    case hash(salt: String)
  }

  /// Keys that are personal data in every event, e.g. `email`, `phone`.
  public var personalKeys: Set<String>
  /// What happens to personal values.
  public var action: Action

  /// Creates a privacy stage.
  public init(personalKeys: Set<String> = [], action: Action = .drop) {
    self.personalKeys = personalKeys
    self.action = action
  }

  public func process(_ event: inout TrackedEvent) -> StageDecision {
    // An event replayed from the crash journal was scrubbed before it was written (its parameters
    // only: default parameters and user properties are added on replay and scrubbed here).
    if !event.parametersScrubbed { event.rewriteAllParameters(scrub) }
    scrub(&event.userProperties)
    return .keep
  }

  /// Scrubs `parameters` in place: the rule every value that may reach a service or the disk obeys.
  func scrub(_ parameters: inout EventParameters) {
    guard parameters.contains(where: { isPersonal($0) || $0.value.isStructured }) else { return }
    parameters.rewrite(scrubbed)
  }

  /// Whether `parameter` is personal: declared so, or its key is one of ``personalKeys``.
  @inline(__always)
  func isPersonal(_ parameter: EventParameter) -> Bool {
    parameter.isPersonal || (!personalKeys.isEmpty && personalKeys.contains(parameter.key))
  }

  /// What a personal value becomes: `nil` when it is dropped, its pseudonym when hashed.
  func pseudonym(of value: ParameterValue) -> ParameterValue? {
    switch action {
    case .drop: nil
    case .hash(let salt): .string(Hashing.sha256Hex(salt + value.text))
    }
  }

  /// The parameter as a service may see it: removed or hashed when personal, its structured value
  /// scrubbed inside (keys of objects at any depth are personal the same way).
  func scrubbed(_ parameter: EventParameter) -> EventParameter? {
    guard isPersonal(parameter) else {
      guard parameter.value.isStructured else { return parameter }
      return EventParameter(key: parameter.key, value: scrubbed(parameter.value))
    }
    return pseudonym(of: parameter.value).map { EventParameter(key: parameter.key, value: $0) }
  }

  /// A structured value with every personal field inside removed or hashed.
  func scrubbed(_ value: ParameterValue) -> ParameterValue {
    switch value {
    case .list(let values):
      return .list(values.map(scrubbed))
    case .object(var fields):
      fields.rewrite(scrubbed)
      return .object(fields)
    default:
      return value
    }
  }
}
