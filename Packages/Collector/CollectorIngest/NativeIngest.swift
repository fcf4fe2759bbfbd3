public import CollectorStore
public import CollectorWire
public import TrackingPlan

/// Rules the collector applies to every event after decoding.
public struct IngestPolicy: Sendable, Hashable {
  /// Events that occurred longer ago than this (after skew correction) are rejected (ms).
  public var maximumEventAge: Int64
  /// The most bytes of free text where the sending client sets no limit (a SimpleAnalytics
  /// description or counter name).
  public var maximumFreeTextBytes: Int
  /// The apps' tracking plans: an event that breaks its app's plan is refused (and quarantined) when
  /// the plan enforces, stored and counted when it warns.
  public var plans: TrackingPlans

  /// A policy; `maximumEventAgeDays` defaults to 30 and is held to 1...36,500 days,
  /// `maximumFreeTextBytes` defaults to ``CollectorLimits/maximumFreeTextBytes`` and is held to
  /// 1...32,768 (an event's size bound).
  public init(
    maximumEventAgeDays: Int = 30, maximumFreeTextBytes: Int = CollectorLimits.maximumFreeTextBytes,
    plans: TrackingPlans = TrackingPlans()
  ) {
    self.maximumEventAge = Int64(min(max(maximumEventAgeDays, 1), 36_500)) * 86_400_000
    self.maximumFreeTextBytes = min(max(maximumFreeTextBytes, 1), CollectorLimits.maximumEventBytes)
    self.plans = plans
  }

  /// Why the stored event `name` with `parametersJSON` (its parameters as stored) breaks `app`'s
  /// enforcing tracking plan, or `nil` (no plan, a plan that warns, or it passes): the check the
  /// vendor routes (GA4, Mixpanel, SimpleAnalytics) apply to the rows they make, as the native
  /// rules apply it to the native event.
  public func planProblem(app: String, name: String, parametersJSON: String) -> FieldError? {
    guard plans.mode(of: app) == .enforce else { return nil }
    guard case .object(let parameters) = try? JSONDocument.parse(Array(parametersJSON.utf8)) else {
      return FieldError(field: "parameters", reason: "must be an object")
    }
    return plans.verdict(app: app, name: name, parameters: parameters)?.problem
  }

  /// The reason an event older than ``maximumEventAge`` is refused with: one text, written by the
  /// ingest rules and recognised by ``isTooOld(_:)`` (metrics count these apart).
  public var tooOldReason: String { "is older than \(maximumEventAge / 86_400_000) days" }

  /// Whether `rejection` is the refusal of an event for its age.
  public func isTooOld(_ rejection: BatchResponse.Rejection) -> Bool {
    rejection.field.hasSuffix("timestamp") && rejection.reason == tooOldReason
  }
}

/// Rows to store and what was rejected, for one request.
public struct IngestResult: Sendable, Hashable {
  /// The rows to commit.
  public var rows: StoreBatch
  /// Events rejected, by index in the request.
  public var rejected: [BatchResponse.Rejection]
  /// Stored events that break a tracking plan that only warns, by index in the request.
  public var planWarnings: [BatchResponse.Rejection] = []

  /// A result.
  public init(rows: StoreBatch, rejected: [BatchResponse.Rejection]) {
    self.rows = rows
    self.rejected = rejected
  }
}

extension NativeIngest {
  /// The lines of the batch's drop reports (`diagnostics`), with the batch's app context. A report
  /// time outside the valid range is replaced by the time it was received.
  static func clientDrops(
    _ reports: [CollectorDropReport], app: String, context: EventContext, receivedAt: Int64
  ) -> [StoredClientDrop] {
    reports.flatMap { report in
      let reportedAt = CollectorLimits.validTimes.contains(report.timestamp) ? report.timestamp : receivedAt
      return report.dropped.map { entry in
        StoredClientDrop(
          app: app, reportID: report.id, service: entry.service ?? "", reason: entry.reason, count: entry.count,
          deviceID: report.anonymousId, appName: context[.appName], appVersion: context[.appVersion],
          platform: context[.platform], reportedAt: reportedAt, receivedAt: receivedAt)
      }
    }
  }
}

/// Turns a decoded native batch into rows: bounds, clock-skew correction, future clamp, age limit.
///
/// Skew: `occurredAt = timestamp + (receivedAt − sentAt)` (Segment's rule), then clamped to
/// `receivedAt`, so a device whose clock runs ahead never writes the future. `sentAt`, `timestamp`
/// and `firstCountedAt` are checked against ``CollectorLimits/validTimes`` before that arithmetic
/// (a hostile value answers 400 or rejects its event; it can never overflow). Counter totals keep the
/// device's `firstCountedAt` as sent: it is part of their de-duplication key, and a corrected value
/// would differ on every retry.
public enum NativeIngest {
  /// The rows of `batch` for `app`, received at `receivedAt` (ms since 1970).
  public static func rows(
    of batch: DecodedBatch, app: String, receivedAt: Int64, policy: IngestPolicy
  ) throws(FieldError) -> IngestResult {
    let context = try checked(batch.context)
    guard batch.counters.count <= CollectorLimits.maximumCountersPerBatch else {
      throw FieldError(field: "counters", reason: "more than \(CollectorLimits.maximumCountersPerBatch) counters")
    }
    if let sentAt = batch.sentAt, !CollectorLimits.validTimes.contains(sentAt) {
      throw FieldError(field: "sentAt", reason: EventRules.timeRule)
    }
    let correction = batch.sentAt.map { receivedAt - $0 } ?? 0
    var rejected = batch.rejected
    var warnings: [BatchResponse.Rejection] = []
    let warns = policy.plans.mode(of: app) == .warn
    var events: [StoredEvent] = []
    events.reserveCapacity(batch.events.count)
    let rejectedIndices = Set(batch.rejected.map(\.index))
    var index = 0
    for event in batch.events {
      while rejectedIndices.contains(index) { index += 1 }
      defer { index += 1 }
      switch row(event, index: index, app: app, context: context, correction: correction, receivedAt, policy) {
      case .success(let stored):
        events.append(stored)
        if warns, let warning = policy.plans.verdict(app: app, name: event.name, parameters: event.parameters)?.problem
        {
          warnings.append(
            .init(index: index, id: event.id, field: "events[\(index)].\(warning.field)", reason: warning.reason))
        }
      case .failure(let rejection): rejected.append(rejection)
      }
    }
    let counters = try counters(of: batch, app: app, context: context, receivedAt: receivedAt)
    rejected.sort { $0.index < $1.index }
    let scope = AppEnvironment.resolve(target: app, sent: context[.environment]).storedApp
    let drops = clientDrops(batch.diagnostics, app: scope, context: context, receivedAt: receivedAt)
    var result = IngestResult(
      rows: StoreBatch(events: events, counters: counters, clientDrops: drops), rejected: rejected)
    result.planWarnings = warnings
    return result
  }

  /// The batch's counter totals, each checked (a counter that breaks a rule refuses the batch).
  static func counters(
    of batch: DecodedBatch, app: String, context: EventContext, receivedAt: Int64
  ) throws(FieldError) -> [StoredCounter] {
    var counters: [StoredCounter] = []
    for (position, counter) in batch.counters.enumerated() {
      guard EventRules.isName(counter.name) else {
        throw FieldError(field: "counters[\(position)].name", reason: EventRules.nameRule)
      }
      guard counter.count >= 0 else { throw FieldError(field: "counters[\(position)].count", reason: "is negative") }
      guard CollectorLimits.validTimes.contains(counter.firstCountedAt) else {
        throw FieldError(field: "counters[\(position)].firstCountedAt", reason: EventRules.timeRule)
      }
      guard counter.anonymousId.map(EventRules.isName) ?? true else {
        throw FieldError(field: "counters[\(position)].anonymousId", reason: EventRules.nameRule)
      }
      guard counter.id.map({ !$0.isEmpty && $0.count <= CollectorLimits.maximumIdentifierLength }) ?? true else {
        throw FieldError(
          field: "counters[\(position)].id",
          reason: "must be 1 to \(CollectorLimits.maximumIdentifierLength) characters"
        )
      }
      let device = counter.anonymousId ?? ""
      counters.append(
        StoredCounter(
          app: app,
          counterID: counter.id ?? ContentID.make(["counter", device, counter.name, String(counter.firstCountedAt)]),
          deviceID: device, name: counter.name, count: counter.count,
          firstCountedAt: counter.firstCountedAt, receivedAt: receivedAt,
          context: context
        )
      )
    }
    return counters
  }

  /// The batch's context, each field checked against the limits of every stored text.
  static func checked(_ context: EventContext) throws(FieldError) -> EventContext {
    for (field, value) in context.fields {
      if value.utf8.count > CollectorLimits.maximumNameBytes {
        throw FieldError(
          field: "context.\(field.rawValue)", reason: "is longer than \(CollectorLimits.maximumNameBytes) bytes")
      }
      if CollectorLimits.hasControlCharacter(value) {
        throw FieldError(field: "context.\(field.rawValue)", reason: EventRules.controlRule)
      }
      if field == .environment, !value.isEmpty, !AppEnvironment.isName(value) {
        throw FieldError(field: "context.environment", reason: AppEnvironment.nameRule)
      }
    }
    return context
  }

  // swift-format-ignore: FunctionParameterCount
  private static func row(
    _ event: CollectorEvent, index: Int, app: String, context: EventContext, correction: Int64,
    _ receivedAt: Int64, _ policy: IngestPolicy
  ) -> Result<StoredEvent, BatchResponse.Rejection> {
    row(of: event, app: app, context: context, correction: correction, receivedAt: receivedAt, policy: policy)
      .mapError { .init(index: index, id: event.id, field: "events[\(index)].\($0.field)", reason: $0.reason) }
  }

  /// The row of one event under the native rules (``EventRules``, its size, its time within
  /// ``CollectorLimits/validTimes`` and the policy's age), its time corrected by `correction`
  /// (`receivedAt − sentAt`, or 0) and clamped to `receivedAt`; or the rule it breaks, its field
  /// relative to the event (`name`, `parameters.items[0].price`, `timestamp`). Every route that
  /// stores events in the native vocabulary (the native batch, Segment's calls) checks them here.
  public static func row(
    of event: CollectorEvent, app: String, context: EventContext, correction: Int64, receivedAt: Int64,
    policy: IngestPolicy
  ) -> Result<StoredEvent, FieldError> {
    let parameters = EventRules.storedParameters(event.parameters)
    if let problem = EventRules.problem(in: event) ?? EventRules.sizeProblem(of: event, stored: parameters) {
      return .failure(problem)
    }
    if let verdict = policy.plans.verdict(app: app, name: event.name, parameters: event.parameters),
      verdict.mode == .enforce
    {
      return .failure(verdict.problem)
    }
    guard event.timestamp > 0, CollectorLimits.validTimes.contains(event.timestamp) else {
      return .failure(FieldError(field: "timestamp", reason: EventRules.timeRule))
    }
    // Both terms are within ±CollectorLimits.validTimes: the sum cannot overflow.
    let occurredAt = min(event.timestamp + correction, receivedAt)
    guard receivedAt - occurredAt <= policy.maximumEventAge else {
      return .failure(FieldError(field: "timestamp", reason: policy.tooOldReason))
    }
    return .success(
      StoredEvent(
        app: app, eventID: event.id, name: event.name, kind: event.kind, occurredAt: occurredAt,
        utcOffsetMinutes: event.utcOffsetMinutes, receivedAt: receivedAt, deviceID: event.anonymousId,
        userID: event.userId.flatMap { $0.isEmpty ? nil : $0 }, sessionID: event.sessionId, context: context,
        parametersJSON: parameters
      )
    )
  }
}
