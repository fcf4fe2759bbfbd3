public import CollectorStore
public import CollectorWire
import Foundation

/// Exactly once for SimpleAnalytics, whose entries carry no id: a resend is told from new entries
/// by what the device sent before.
///
/// The client resends after any failure with the unacknowledged entries first, in order, then new
/// ones. So the collector remembers each device's committed submissions (the ordered fingerprints
/// of their entries and the ids they were stored under, ``StoredSubmission``) and reads a request
/// as a resend of the longest remembered submission whose entries it repeats, in order, at its
/// front, followed by more: those entries keep their ids (stored once), everything after them is
/// new, however identical (three taps on "Refresh" in one second, spread over two submissions, are
/// three).
///
/// - A request equal to a remembered submission, entry for entry (a one-item submission equal to the
///   last one; a burst of identical taps in one second submitted twice), cannot be told from a
///   resend without new entries: it is read as new (nothing lost; such a resend is stored twice)
///   and counted as ambiguous (`collector_simple_analytics_ambiguous_total`).
/// - Counters: a counter of a resend replaces its earlier total when it is the same or larger (the
///   client kept adding to it); a counter of a new submission, or a smaller one (a resend never
///   sends less), adds a total of its own. A counters-only request whose counters all have the
///   first-count times of the device's last submission cannot be told apart by its items: it is read
///   as a resend of it by that rule (a grown or equal total replaces, a smaller one adds) and counted
///   as ambiguous.
/// - Entries that break a rule go to the quarantine under their own ids (``QuarantinedEntry``) and
///   the request is answered 2xx: the client deletes what a 2xx answered, and nothing is lost.
public enum SimpleAnalyticsSubmissions {
  /// The route name entries are quarantined under.
  public static let route = "simple_analytics"
  /// The submissions of a device remembered.
  public static let remembered = 16

  /// What one request becomes.
  public struct Outcome: Sendable {
    /// Events, counters, quarantined entries and the submission, to commit together.
    public var rows: StoreBatch
    /// Items (stored ones; quarantined ones are not counted) recognised as a resend of what was
    /// stored before.
    public var resentItems: Int
    /// What was quarantined and why, by position.
    public var quarantined: [BatchResponse.Rejection]
    /// Whether the request could not be told from a resend (``SimpleAnalyticsSubmissions``).
    public var ambiguous: Bool

    /// Keeps a refused entry (`entry`, a one-entry payload) in the quarantine under `id`.
    mutating func quarantine(
      _ rejection: BatchResponse.Rejection, id: String, app: String, receivedAt: Int64, entry: String
    ) {
      quarantined.append(rejection)
      rows.quarantined.append(
        QuarantinedEntry(
          id: id, app: app, route: route, receivedAt: receivedAt, entry: entry,
          reasons: ["\(rejection.field): \(rejection.reason)"]))
    }
  }

  /// The rows of one request, read against `prior` (the device's remembered submissions, newest
  /// first). `entries` is the request cut into its entries (for the quarantine and fingerprints).
  public static func rows(
    of payload: DecodedSimpleAnalytics, entries: RequestEntries, app: String, receivedAt: Int64,
    policy: IngestPolicy, prior: [StoredSubmission]
  ) -> Outcome {
    let device = payload.context["device_id"] ?? ""
    let itemPrints = fingerprints(entries.elements("items").map { ["item", device, $0] })
    let counterPrints = entries.elements("counters").indices.map { index in
      ContentID.make(
        ["counter", SimpleAnalyticsIngest.counterKey(payload, index: index, raw: entries.elements("counters")[index])])
    }
    let (resend, ambiguous) = reading(items: itemPrints, counters: counterPrints, prior: prior)
    let key = ContentID.make(["submission", app, device, String(receivedAt), UUID().uuidString])
    var outcome = Outcome(rows: StoreBatch(), resentItems: 0, quarantined: [], ambiguous: ambiguous)
    var submission = StoredSubmission(app: app, deviceID: device, receivedAt: receivedAt, items: [], counters: [])
    let items = SimpleAnalyticsIngest.items(of: payload, app: app, receivedAt: receivedAt, policy: policy)
    let resentIDs = resend?.items.map(\.id) ?? []
    for (index, print) in itemPrints.enumerated() {
      let id = index < resentIDs.count ? resentIDs[index] : ContentID.make([print, key])
      submission.items.append(.init(fingerprint: print, id: id))
      switch items[index] {
      case .success(var event)?:
        event.eventID = id
        outcome.rows.events.append(event)
        if index < resentIDs.count { outcome.resentItems += 1 }
      case .failure(let rejection)?:
        outcome.quarantine(rejection, id: id, app: app, receivedAt: receivedAt, entry: entries.single("items", index))
      case nil: break
      }
    }
    let counters = SimpleAnalyticsIngest.counters(of: payload, app: app, receivedAt: receivedAt, policy: policy)
    let earlier = Dictionary((resend?.counters ?? []).map { ($0.fingerprint, $0) }) { first, _ in first }
    for (index, print) in counterPrints.enumerated() {
      let count = (try? counters[index]?.get().count) ?? 0
      // A resend sends the same or a larger count (the client kept adding): a smaller one is new.
      let id = earlier[print].flatMap { count >= $0.count ? $0.id : nil } ?? ContentID.make([print, key])
      submission.counters.append(.init(fingerprint: print, id: id, count: count))
      switch counters[index] {
      case .success(var counter)?:
        counter.counterID = id
        outcome.rows.counters.append(counter)
      case .failure(let rejection)?:
        outcome.quarantine(
          rejection, id: id, app: app, receivedAt: receivedAt, entry: entries.single("counters", index))
      case nil: break
      }
    }
    outcome.rows.submissions = [submission]
    return outcome
  }

  /// Fingerprints of entries, the k-th identical one of a request told from the others.
  static func fingerprints(_ parts: [[String]]) -> [String] {
    var seen: [String: Int] = [:]
    return parts.map { part in
      let base = ContentID.make(part)
      let occurrence = seen[base, default: 0]
      seen[base] = occurrence + 1
      return ContentID.make([base, String(occurrence)])
    }
  }

  /// The remembered submission a request resends, if any, and whether the reading is a guess.
  ///
  /// Items: the longest remembered submission the request repeats at its front *and goes beyond*
  /// (a resend carries what was unacknowledged, and the client's raised threshold adds more). A
  /// request equal to a remembered submission, entry for entry, is what a burst of identical taps
  /// submitted twice also looks like: it is read as new (nothing lost) and counted as ambiguous.
  static func reading(items: [String], counters: [String], prior: [StoredSubmission]) -> (StoredSubmission?, Bool) {
    if !items.isEmpty {
      func repeats(_ submission: StoredSubmission) -> Bool {
        !submission.items.isEmpty && submission.items.count <= items.count
          && zip(submission.items, items).allSatisfy { $0.fingerprint == $1 }
      }
      let repeated = prior.filter(repeats)
      if repeated.contains(where: { $0.items.count == items.count }) { return (nil, true) }
      return (repeated.max { $0.items.count < $1.items.count }, false)
    }
    guard let last = prior.first, !counters.isEmpty else { return (nil, false) }
    let earlier = Set(last.counters.map(\.fingerprint))
    return counters.allSatisfy(earlier.contains) ? (last, true) : (nil, false)
  }

  /// A quarantined SimpleAnalytics entry read again under `policy`: its rows (under the entry's
  /// id, so a replay stores it once however often it runs), or its reasons now.
  public static func replay(_ entry: QuarantinedEntry, policy: IngestPolicy) -> ReplayOutcome {
    let payload: DecodedSimpleAnalytics
    do {
      payload = try SimpleAnalyticsDecoder.decode(Array(entry.entry.utf8))
    } catch {
      return .refused(["\(error.field): \(error.reason)"])
    }
    let items = SimpleAnalyticsIngest.items(of: payload, app: entry.app, receivedAt: entry.receivedAt, policy: policy)
    let counters = SimpleAnalyticsIngest.counters(
      of: payload, app: entry.app, receivedAt: entry.receivedAt, policy: policy)
    switch (items[0], counters[0]) {
    case (.success(var event)?, _):
      event.eventID = entry.id
      return .stored(StoreBatch(events: [event]))
    case (_, .success(var counter)?):
      counter.counterID = entry.id
      return .stored(StoreBatch(counters: [counter]))
    case (.failure(let rejection)?, _), (_, .failure(let rejection)?):
      return .refused(["\(rejection.field): \(rejection.reason)"])
    case (nil, nil):
      return .refused(["entry: holds no item and no counter"])
    }
  }
}
