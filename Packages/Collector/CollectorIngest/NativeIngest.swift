public import CollectorStore
public import CollectorWire

/// Rules the collector applies to every event after decoding.
public struct IngestPolicy: Sendable, Hashable {
  /// Events that occurred longer ago than this (after skew correction) are rejected (ms).
  public var maximumEventAge: Int64
  /// The most bytes of free text where the sending client sets no limit (a SimpleAnalytics
  /// description or counter name).
  public var maximumFreeTextBytes: Int

  /// A policy; `maximumEventAgeDays` defaults to 30 and is held to 1...36,500 days,
  /// `maximumFreeTextBytes` defaults to ``CollectorLimits/maximumFreeTextBytes`` and is held to
  /// 1...32,768 (an event's size bound).
  public init(maximumEventAgeDays: Int = 30, maximumFreeTextBytes: Int = CollectorLimits.maximumFreeTextBytes) {
    self.maximumEventAge = Int64(min(max(maximumEventAgeDays, 1), 36_500)) * 86_400_000
    self.maximumFreeTextBytes = min(max(maximumFreeTextBytes, 1), CollectorLimits.maximumEventBytes)
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
      throw FieldError(field: "sentAt", reason: TimeRule.text)
    }
    let correction = batch.sentAt.map { receivedAt - $0 } ?? 0
    var rejected = batch.rejected
    var events: [StoredEvent] = []
    events.reserveCapacity(batch.events.count)
    let rejectedIndices = Set(batch.rejected.map(\.index))
    var index = 0
    for event in batch.events {
      while rejectedIndices.contains(index) { index += 1 }
      defer { index += 1 }
      switch row(event, index: index, app: app, context: context, correction: correction, receivedAt, policy) {
      case .success(let stored): events.append(stored)
      case .failure(let rejection): rejected.append(rejection)
      }
    }
    var counters: [StoredCounter] = []
    for (position, counter) in batch.counters.enumerated() {
      guard BoundedText.isName(counter.name) else {
        throw FieldError(field: "counters[\(position)].name", reason: BoundedText.nameRule)
      }
      guard counter.count >= 0 else { throw FieldError(field: "counters[\(position)].count", reason: "is negative") }
      guard CollectorLimits.validTimes.contains(counter.firstCountedAt) else {
        throw FieldError(field: "counters[\(position)].firstCountedAt", reason: TimeRule.text)
      }
      guard counter.anonymousId.map(BoundedText.isName) ?? true else {
        throw FieldError(field: "counters[\(position)].anonymousId", reason: BoundedText.nameRule)
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
    rejected.sort { $0.index < $1.index }
    let drops = clientDrops(batch.diagnostics, app: app, context: context, receivedAt: receivedAt)
    return IngestResult(rows: StoreBatch(events: events, counters: counters, clientDrops: drops), rejected: rejected)
  }

  /// The batch's context, each field checked against the limits of every stored text.
  static func checked(_ context: EventContext) throws(FieldError) -> EventContext {
    for (field, value) in context.fields {
      if value.utf8.count > CollectorLimits.maximumNameBytes {
        throw FieldError(
          field: "context.\(field.rawValue)", reason: "is longer than \(CollectorLimits.maximumNameBytes) bytes")
      }
      if CollectorLimits.hasControlCharacter(value) {
        throw FieldError(field: "context.\(field.rawValue)", reason: BoundedText.controlRule)
      }
    }
    return context
  }

  // swift-format-ignore: FunctionParameterCount
  private static func row(
    _ event: CollectorEvent, index: Int, app: String, context: EventContext, correction: Int64,
    _ receivedAt: Int64, _ policy: IngestPolicy
  ) -> Result<StoredEvent, BatchResponse.Rejection> {
    func reject(_ field: String, _ reason: String) -> Result<StoredEvent, BatchResponse.Rejection> {
      .failure(.init(index: index, id: event.id, field: "events[\(index)].\(field)", reason: reason))
    }
    guard !event.id.isEmpty, event.id.count <= CollectorLimits.maximumIdentifierLength,
      !CollectorLimits.hasControlCharacter(event.id)
    else {
      return reject(
        "id", "must be 1 to \(CollectorLimits.maximumIdentifierLength) characters without control characters")
    }
    guard BoundedText.isName(event.name) else { return reject("name", BoundedText.nameRule) }
    guard BoundedText.isName(event.kind) else { return reject("kind", BoundedText.nameRule) }
    guard !event.anonymousId.isEmpty, event.anonymousId.utf8.count <= CollectorLimits.maximumNameBytes,
      !CollectorLimits.hasControlCharacter(event.anonymousId)
    else {
      return reject(
        "anonymousId", "must be 1 to \(CollectorLimits.maximumNameBytes) bytes without control characters")
    }
    if let user = event.userId,
      user.utf8.count > CollectorLimits.maximumNameBytes || CollectorLimits.hasControlCharacter(user)
    {
      return reject("userId", "must be at most \(CollectorLimits.maximumNameBytes) bytes without control characters")
    }
    for (key, value) in event.parameters {
      guard BoundedText.isName(key) else { return reject("parameters", "a key \(BoundedText.nameRule)") }
      if let problem = BoundedText.problem(in: value) {
        return reject("parameters.\(key)" + problem.path, problem.reason)
      }
    }
    if let problem = CommerceRules.problem(event: event.name, parameters: event.parameters) {
      return reject(problem.path, problem.reason)
    }
    let parameters = ParameterJSON.encode(event.parameters)
    let size = parameters.utf8.count + event.name.utf8.count + event.id.utf8.count + event.anonymousId.utf8.count
    guard size <= CollectorLimits.maximumEventBytes else {
      return reject("parameters", "the event is larger than \(CollectorLimits.maximumEventBytes) bytes")
    }
    guard event.timestamp > 0, CollectorLimits.validTimes.contains(event.timestamp) else {
      return reject("timestamp", TimeRule.text)
    }
    // Both terms are within ±CollectorLimits.validTimes: the sum cannot overflow.
    let occurredAt = min(event.timestamp + correction, receivedAt)
    guard receivedAt - occurredAt <= policy.maximumEventAge else {
      return reject("timestamp", policy.tooOldReason)
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

/// Bounds on names and keys.
enum BoundedText {
  static let nameRule = "must be 1 to \(CollectorLimits.maximumNameBytes) bytes without control characters"
  static let controlRule = "must not contain control characters (U+0000 to U+001F, U+007F)"
  static let nulRule = "must not contain U+0000 (NUL)"

  /// Where inside `value` (relative to it) a string holds NUL or an object key breaks
  /// ``nameRule``, or `nil`: what the stores cannot keep or reports cannot name.
  static func problem(in value: CollectorValue) -> (path: String, reason: String)? {
    switch value {
    case .string(let text):
      return text.utf8.contains(0) ? ("", nulRule) : nil
    case .int, .double, .bool:
      return nil
    case .list(let values):
      for (position, element) in values.enumerated() {
        if let inner = problem(in: element) { return ("[\(position)]" + inner.path, inner.reason) }
      }
      return nil
    case .object(let fields):
      for key in fields.keys.sorted() {
        guard isName(key) else { return ("", "a key \(nameRule)") }
        if let inner = problem(in: fields[key]!) { return ("." + key + inner.path, inner.reason) }
      }
      return nil
    }
  }

  /// 1 to 256 bytes, no control character: event names, kinds, keys, counter names.
  static func isName(_ text: String) -> Bool {
    let count = text.utf8.count
    return count > 0 && count <= CollectorLimits.maximumNameBytes && !CollectorLimits.hasControlCharacter(text)
  }

}

/// The rule every time from outside follows.
enum TimeRule {
  static let text = "must be ms since 1970, from 1970-01-01 to 9999-12-31"
}

/// Parameters as a JSON object with sorted keys (the stored form).
enum ParameterJSON {
  static func encode(_ parameters: [String: CollectorValue]) -> String {
    var json = JSONWriter(capacity: 64 + parameters.count * 32)
    json.beginObject()
    for key in parameters.keys.sorted() {
      json.key(key)
      parameters[key]!.write(to: &json)
    }
    json.endObject()
    return String(decoding: json.bytes, as: UTF8.self)
  }

  static func encode(strings parameters: [String: String]) -> String {
    var json = JSONWriter(capacity: 64 + parameters.count * 32)
    json.beginObject()
    for key in parameters.keys.sorted() {
      json.key(key)
      json.string(parameters[key]!)
    }
    json.endObject()
    return String(decoding: json.bytes, as: UTF8.self)
  }
}
