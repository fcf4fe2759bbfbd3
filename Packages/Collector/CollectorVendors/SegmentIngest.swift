public import CollectorIngest
public import CollectorStore
public import CollectorWire
public import WireJSON

/// Segment's Tracking API on the collector: a batch (`{"batch": [calls…], "context", "sentAt"}`, as
/// analytics-swift, analytics.js and analytics-kotlin post it) or one call (`/v1/track`, …), each call
/// stored as one event (``SegmentCall``) under the native rules (``NativeIngest/row(of:app:context:correction:receivedAt:policy:)``),
/// or kept in the quarantine with its reason, never dropped unseen.
///
/// - `messageId` is the event id, so a resent call is stored once; a call without one gets an id
///   derived from its content.
/// - Time: `originalTimestamp`, else `timestamp` (ISO 8601 with an offset, ``ISO8601Timestamp``), corrected by the
///   call's or the batch's `sentAt` as Segment does (`receivedAt − (sentAt − timestamp)`) and
///   clamped to the arrival; none at all is the arrival. The UTC offset is `context.timezone`'s at
///   that time, else the offset written in the timestamp.
/// - The device is `anonymousId`, else `userId` (`alias`: `anonymousId`, else `previousId`); the user
///   is `userId`, so `identify` and `alias` tie the device to the person as a native event with a
///   user does.
/// - A call may be at most 32 KB and a batch 2,500 calls (Segment's limits; the 500 KB request
///   bound is the HTTP layer's).
public enum SegmentIngest {
  /// The route name refused calls are quarantined under.
  public static let route = "segment"
  /// The largest call, as JSON.
  public static let maximumCallBytes = 32 * 1024
  /// The most calls in one batch.
  public static let maximumCallsPerBatch = 2500

  /// What became of a request's calls.
  public struct Outcome: Sendable {
    /// The rows of the calls that pass.
    public var events: [StoredEvent] = []
    /// Each refused call: its index in the request and the rule it breaks, the field as a path in
    /// the request (`batch[2].event`, or `event` for a single call).
    public var refused: [(index: Int, error: FieldError)] = []
    /// The refused calls as quarantine entries (each a batch of one call, without the write key).
    public var quarantined: [QuarantinedEntry] = []
  }

  /// The outcome of `request` (the body's object): a batch when `call` is `nil`, else one call of
  /// that type. Throws for what refuses the request as a whole (no `batch` list, too many calls).
  public static func outcome(
    of request: JSONObject, call: SegmentCall?, app: String, receivedAt: Int64, policy: IngestPolicy
  ) throws(FieldError) -> Outcome {
    let messages: [JSONValue]
    var batchContext: JSONObject?
    var batchSentAt: Int64?
    if call == nil {
      guard case .array(let list)? = request["batch"] else {
        throw FieldError(field: "batch", reason: "is required: the list of calls")
      }
      guard list.count <= maximumCallsPerBatch else {
        throw FieldError(field: "batch", reason: "holds \(list.count) calls; at most \(maximumCallsPerBatch)")
      }
      if case .object(let context)? = request["context"] { batchContext = context }
      if let sentAt = request["sentAt"], sentAt != .null {
        batchSentAt = try SegmentCallRules.sentAt(sentAt, field: "sentAt")
      }
      messages = list
    } else {
      messages = [.object(request)]
    }
    var outcome = Outcome()
    for (index, value) in messages.enumerated() {
      let prefix = call == nil ? "batch[\(index)]" : ""
      let message = value.object.map(withoutKey)
      let result = message.map { message in
        event(
          message, call: call, batch: (batchContext, batchSentAt), app: app, receivedAt: receivedAt, policy: policy)
      }
      switch result ?? .failure(FieldError(field: "", reason: "is not an object")) {
      case .success(let stored): outcome.events.append(stored)
      case .failure(let error):
        let field = [prefix, error.field].filter { !$0.isEmpty }.joined(separator: prefix.isEmpty ? "" : ".")
        let refused = FieldError(field: field, reason: error.reason)
        outcome.refused.append((index, refused))
        let kept = keptRequest(value, call: call, context: batchContext, sentAt: request["sentAt"])
        outcome.quarantined.append(
          QuarantinedEntry(
            id: ContentID.make([route, app, kept]), app: app, route: route, receivedAt: receivedAt, entry: kept,
            reasons: [refused.description]))
      }
    }
    return outcome
  }

  /// A quarantined call read again under `policy`: its row, or its reasons now.
  public static func replay(_ entry: QuarantinedEntry, policy: IngestPolicy) -> ReplayOutcome {
    guard case .object(let request)? = try? JSONDocument.parse(Array(entry.entry.utf8)) else {
      return .refused(["entry: is not a Segment batch"])
    }
    do {
      let outcome = try outcome(of: request, call: nil, app: entry.app, receivedAt: entry.receivedAt, policy: policy)
      guard outcome.refused.isEmpty else { return .refused(outcome.refused.map(\.error.description)) }
      return .stored(StoreBatch(events: outcome.events))
    } catch {
      return .refused([error.description])
    }
  }

  /// The row of one call, or the rule it breaks (its field relative to the call).
  private static func event(
    _ message: JSONObject, call: SegmentCall?, batch: (context: JSONObject?, sentAt: Int64?), app: String,
    receivedAt: Int64, policy: IngestPolicy
  ) -> Result<StoredEvent, FieldError> {
    Result { () throws(FieldError) -> StoredEvent in
      let rules = SegmentCallRules(message: message, call: call)
      let type = try rules.type()
      guard message.json.count <= maximumCallBytes else {
        throw FieldError(field: "", reason: "the call is larger than \(maximumCallBytes / 1024) KB")
      }
      let (device, user) = try rules.identities(type)
      let name = try rules.name(type)
      let parameters = try rules.parameters(type)
      let (timestamp, writtenOffset) = try rules.time(receivedAt: receivedAt)
      let sentAt = try rules.sentAt(batch: batch.sentAt)
      let context = SegmentContext.merged(batch.context, message["context"]?.object)
      let stored = SegmentContext.stored(context)
      let offset = SegmentContext.offset(zone: stored[.timeZone], at: timestamp) ?? writtenOffset ?? 0
      let id = message["messageId"]?.string.flatMap { $0.isEmpty ? nil : $0 }
      let event = CollectorEvent(
        id: id ?? ContentID.make([route, type.rawValue, String(decoding: message.json, as: UTF8.self)]),
        name: name, kind: type.kind, timestamp: timestamp, utcOffsetMinutes: offset, parameters: parameters,
        anonymousId: device, userId: user)
      let correction = sentAt.map { receivedAt - $0 } ?? 0
      return try NativeIngest.row(
        of: event, app: app, context: stored, correction: correction, receivedAt: receivedAt, policy: policy
      ).mapError { FieldError(field: type.messageField($0.field), reason: $0.reason) }.get()
    }
  }

  /// What the quarantine keeps of a refused call: a batch of that call alone (its type written in,
  /// the write key left out) with the batch's context and `sentAt`, so that a replay reads it as
  /// the request read it.
  private static func keptRequest(_ value: JSONValue, call: SegmentCall?, context: JSONObject?, sentAt: JSONValue?)
    -> String
  {
    var kept = value
    if case .object(let message) = value {
      var fields = withoutKey(message).fields
      if let call, message["type"] == nil {
        fields.insert(JSONField(key: "type", value: .string(call.rawValue)), at: 0)
      }
      kept = .object(JSONObject(fields))
    }
    var request: [JSONField] = [JSONField(key: "batch", value: .array([kept]))]
    if let context { request.append(JSONField(key: "context", value: .object(context))) }
    if let sentAt { request.append(JSONField(key: "sentAt", value: sentAt)) }
    return String(decoding: JSONValue.object(JSONObject(request)).json, as: UTF8.self)
  }

  /// `message` without its `writeKey` (a secret is never stored).
  private static func withoutKey(_ message: JSONObject) -> JSONObject {
    JSONObject(message.fields.filter { $0.key != "writeKey" })
  }
}
