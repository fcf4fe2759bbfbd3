public import CollectorStore
public import CollectorWire

/// The native batch's refused events in the quarantine, and their replay.
///
/// Each refused event is kept as a batch of its own: the request's `context` and `sentAt` around
/// the one event, so a replay applies the same skew correction and rules. Its id comes from the
/// app and the event's text: a client that resends the batch quarantines nothing twice. A replayed
/// event keeps the client's event id, so a replay stores it once however often it runs.
public enum NativeQuarantine {
  /// The route name entries are quarantined under.
  public static let route = "batch"

  /// The quarantined entries for `rejected` (events refused by position) of the request `body`.
  public static func entries(
    _ rejected: [BatchResponse.Rejection], body: [UInt8], app: String, receivedAt: Int64
  ) -> [QuarantinedEntry] {
    guard !rejected.isEmpty, let parts = RequestEntries(body, arrays: ["events", "counters"]) else { return [] }
    let events = parts.elements("events")
    var reasons: [Int: [String]] = [:]
    for rejection in rejected where events.indices.contains(rejection.index) {
      reasons[rejection.index, default: []].append("\(rejection.field): \(rejection.reason)")
    }
    return reasons.keys.sorted().map { index in
      QuarantinedEntry(
        id: ContentID.make([route, app, events[index]]), app: app, route: route, receivedAt: receivedAt,
        entry: parts.single("events", index), reasons: reasons[index] ?? [])
    }
  }

  /// The quarantined entries for drop reports (`diagnostics`) that broke a rule: each kept as a batch
  /// of its own, like a refused event.
  public static func entries(refusedDiagnostics refused: [FieldError], body: [UInt8], app: String, receivedAt: Int64)
    -> [QuarantinedEntry]
  {
    guard !refused.isEmpty, let parts = RequestEntries(body, arrays: ["events", "counters", "diagnostics"]) else {
      return []
    }
    let reports = parts.elements("diagnostics")
    var reasons: [Int: [String]] = [:]
    for error in refused {
      let digits = error.field.dropFirst("diagnostics[".count).prefix { $0.isNumber }
      guard error.field.hasPrefix("diagnostics["), let index = Int(digits), reports.indices.contains(index) else {
        continue
      }
      reasons[index, default: []].append("\(error.field): \(error.reason)")
    }
    return reasons.keys.sorted().map { index in
      QuarantinedEntry(
        id: ContentID.make([route, app, reports[index]]), app: app, route: route, receivedAt: receivedAt,
        entry: parts.single("diagnostics", index), reasons: reasons[index] ?? [])
    }
  }

  /// A quarantined native event read again under `policy`: its rows, or its reasons now.
  public static func replay(_ entry: QuarantinedEntry, policy: IngestPolicy) -> ReplayOutcome {
    do {
      let decoded = try BatchDecoder.decode(Array(entry.entry.utf8))
      let result = try NativeIngest.rows(of: decoded, app: entry.app, receivedAt: entry.receivedAt, policy: policy)
      guard result.rejected.isEmpty, decoded.refusedDiagnostics.isEmpty else {
        return .refused(
          result.rejected.map { "\($0.field): \($0.reason)" } + decoded.refusedDiagnostics.map(\.description))
      }
      return .stored(result.rows)
    } catch {
      return .refused(["\(error.field): \(error.reason)"])
    }
  }
}

/// What a replay made of a quarantined entry.
public enum ReplayOutcome: Sendable, Hashable {
  /// It passes today's rules: these rows store it (under ids that make a second replay store nothing).
  case stored(StoreBatch)
  /// It still breaks them, for these reasons.
  case refused([String])
}

/// A request body that could not be read at all: kept (its first
/// ``QuarantinedEntry/maximumEntryBytes``) with the reason, while the request is answered 4xx.
public enum UnreadableBody {
  /// The quarantined entry for `body`, refused on `route` for `reason`.
  public static func entry(_ body: [UInt8], route: String, app: String, receivedAt: Int64, reason: String)
    -> QuarantinedEntry
  {
    let text = String(decoding: body.prefix(QuarantinedEntry.maximumEntryBytes + 1), as: UTF8.self)
    return QuarantinedEntry(
      id: ContentID.make(["body", route, app, String(receivedAt), text]), app: app, route: route,
      receivedAt: receivedAt, entry: text, reasons: [reason])
  }
}
