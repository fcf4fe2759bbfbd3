import Foundation
import WireJSON

/// The one writer of the native batch (`POST /v1/batch`) and of its answer: the counterpart of
/// ``BatchDecoder``. Clients, the collector and load generators all write the wire through it, so
/// the field names live here and in ``CollectorBatch``'s `Codable` types, nowhere else.
///
/// Events are written once each, as their record is made (``EventWriter``), and a batch is put
/// together from already-written events without re-encoding them:
///
/// ```swift
/// var event = EventWriter(id: id, name: "add_to_cart", kind: "action", timestamp: ms, utcOffsetMinutes: 180)
/// event.parameter("product_id", string: "P1")
/// let bytes = event.finish(anonymousId: install, userId: nil, sessionId: session)
/// let body = BatchWriter.batch(sentAt: now, context: BatchWriter.context(context), events: [bytes[...]])
/// ```
public enum BatchWriter {
  /// The context object: every field of ``ContextField``, in declaration order.
  public static func context(_ context: EventContext) -> [UInt8] {
    var json = JSONWriter(capacity: 512)
    json.beginObject()
    for (field, value) in context.fields {
      json.member(field.rawValue, value)
    }
    json.endObject()
    return json.bytes
  }

  /// One event object.
  public static func event(_ event: CollectorEvent) -> [UInt8] {
    var writer = EventWriter(
      id: event.id, name: event.name, kind: event.kind, timestamp: event.timestamp,
      utcOffsetMinutes: event.utcOffsetMinutes)
    for (key, value) in event.parameters { writer.parameter(key, value) }
    return writer.finish(anonymousId: event.anonymousId, userId: event.userId, sessionId: event.sessionId)
  }

  /// A batch from written parts: `context` from ``context(_:)``, each event from ``EventWriter`` or
  /// ``event(_:)``.
  public static func batch(
    sentAt: Int64, context: [UInt8], events: [ArraySlice<UInt8>], counters: [CollectorCounter] = [],
    diagnostics: [ArraySlice<UInt8>] = []
  ) -> [UInt8] {
    var json = JSONWriter(capacity: events.reduce(context.count + 64 + counters.count * 128) { $0 + $1.count + 1 })
    json.beginObject()
    json.member("sentAt", sentAt)
    json.key("context")
    json.raw(context)
    json.key("events")
    json.beginArray()
    for event in events { json.raw(event) }
    json.endArray()
    json.key("counters")
    json.beginArray()
    for counter in counters { write(counter, to: &json) }
    json.endArray()
    // Only when there are some: a batch without reports reads as before on older collectors.
    if !diagnostics.isEmpty {
      json.key("diagnostics")
      json.beginArray()
      for report in diagnostics { json.raw(report) }
      json.endArray()
    }
    json.endObject()
    return json.bytes
  }

  /// A whole batch.
  public static func batch(_ batch: CollectorBatch) -> [UInt8] {
    Self.batch(
      sentAt: batch.sentAt, context: context(batch.context), events: batch.events.map { event($0)[...] },
      counters: batch.counters, diagnostics: (batch.diagnostics ?? []).map { dropReport($0)[...] })
  }

  /// The collector's answer to a batch.
  public static func response(_ response: BatchResponse) -> [UInt8] {
    var json = JSONWriter(capacity: 32 + response.rejected.count * 96)
    json.beginObject()
    json.member("accepted", response.accepted)
    json.key("rejected")
    json.beginArray()
    for rejection in response.rejected {
      json.beginObject()
      json.member("index", rejection.index)
      json.key("id")
      if let id = rejection.id { json.string(id) } else { json.null() }
      write(field: rejection.field, reason: rejection.reason, to: &json)
      json.endObject()
    }
    json.endArray()
    json.endObject()
    return json.bytes
  }

  /// The collector's answer to a request it refuses as a whole: `{"error":{"field":…,"reason":…}}`.
  public static func refusal(_ error: FieldError) -> [UInt8] {
    var json = JSONWriter(capacity: 48 + error.field.utf8.count + error.reason.utf8.count)
    json.beginObject()
    json.key("error")
    json.beginObject()
    write(field: error.field, reason: error.reason, to: &json)
    json.endObject()
    json.endObject()
    return json.bytes
  }

  private static func write(field: String, reason: String, to json: inout JSONWriter) {
    json.member("field", field)
    json.member("reason", reason)
  }

  private static func write(_ counter: CollectorCounter, to json: inout JSONWriter) {
    json.beginObject()
    json.member("name", counter.name)
    json.member("count", counter.count)
    json.member("firstCountedAt", counter.firstCountedAt)
    if let install = counter.anonymousId {
      json.member("anonymousId", install)
    }
    if let id = counter.id {
      json.member("id", id)
    }
    json.endObject()
  }
}

/// Writes one event object of the native batch, fields in the order ``BatchDecoder`` reads
/// fastest: start it, add its parameters, finish it.
public struct EventWriter: Sendable {
  private var json: JSONWriter

  /// Starts an event.
  public init(id: String, name: String, kind: String, timestamp: Int64, utcOffsetMinutes: Int, capacity: Int = 256) {
    json = JSONWriter(capacity: capacity)
    json.beginObject()
    json.member("id", id)
    json.member("name", name)
    json.member("kind", kind)
    json.member("timestamp", timestamp)
    json.member("utcOffsetMinutes", utcOffsetMinutes)
    json.key("parameters")
    json.beginObject()
  }

  /// Adds a string parameter.
  public mutating func parameter(_ key: String, string value: String) {
    json.member(key, value)
  }

  /// Adds an integer parameter.
  public mutating func parameter(_ key: String, int value: Int64) {
    json.member(key, value)
  }

  /// Adds a floating-point parameter (a non-finite one is written as `null`, which the collector
  /// refuses with the event's index: it is not a value the batch can carry).
  public mutating func parameter(_ key: String, double value: Double) {
    json.member(key, value)
  }

  /// Adds a boolean parameter.
  public mutating func parameter(_ key: String, bool value: Bool) {
    json.member(key, value)
  }

  /// Adds a parameter of the wire's value type (a list, or an object with its keys in order).
  public mutating func parameter(_ key: String, _ value: JSONValue) {
    json.key(key)
    value.write(to: &json)
  }

  /// Ends the event with who tracked it and returns its bytes.
  public mutating func finish(anonymousId: String, userId: String?, sessionId: Int64?) -> [UInt8] {
    json.endObject()
    json.member("anonymousId", anonymousId)
    if let userId {
      json.member("userId", userId)
    }
    if let sessionId {
      json.member("sessionId", sessionId)
    }
    json.endObject()
    return json.bytes
  }
}
