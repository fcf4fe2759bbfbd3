import CollectorDashboard
import CollectorReports
import CollectorStore
import CollectorWire
import Foundation
import HTTPTypes
import Hummingbird

/// Notes on the time charts: `POST /annotations/add` (any signed-in session) and
/// `POST /annotations/delete` (the note's author or an admin), both with the session's CSRF token;
/// and the marks every time chart shows (releases and notes, ``ChartMark``).
extension DashboardController {
  /// How many days before a range a version must be unseen for its first day in the range to be a
  /// release.
  static let releaseLookback: Int64 = 30

  /// The range's releases (app versions first seen in it, unseen in the 30 days before; in a range
  /// longer than version adoption's 400 days, those of its last 370) and notes.
  func marks(_ filter: ReportFilter, reports: any ReportEngine) async throws -> [ChartMark] {
    let day: Int64 = 86_400_000
    var earlier = filter
    earlier.from = max(filter.from - Self.releaseLookback * day, filter.to - 400 * day)
    let releases = ChartMark.releases(
      try await reports.versionAdoption(earlier), from: max(filter.from, earlier.from + Self.releaseLookback * day))
    let notes = try await collector.store.annotations(app: filter.app, from: filter.from, to: filter.to)
    return (releases + notes.map { ChartMark(time: $0.time, text: $0.text, note: $0) })
      .sorted { ($0.time, $0.text) < ($1.time, $1.text) }
  }

  func addNote(_ request: Request) async throws -> Response {
    let (session, form) = try await sessionForm(request, action: "adding a note")
    let app = form.get("app") ?? ""
    guard !app.isEmpty else { throw FieldError(field: "app", reason: "name the app the note is of") }
    try ReportText.check(app, field: "app")
    let text = (form.get("text") ?? "").trimmingCharacters(in: .whitespaces)
    guard (1...200).contains(text.count) else { throw FieldError(field: "text", reason: "is 1 to 200 characters") }
    try ReportText.check(text, field: "text")
    guard let day = form.get("day").flatMap(ReportTime.parse) else {
      throw FieldError(field: "day", reason: "pick a day such as 2026-11-01")
    }
    let zone = try ReportZone.named(form.get("tz")) ?? collector.configuration.zone(of: app)
    let now = EventCollector.now()
    let note = Annotation(
      id: Self.newRecordID(), app: app, time: zone.utc(local: day), text: text, createdBy: session.keyID, createdAt: now
    )
    try await collector.storing("note") { try await collector.store.addAnnotation(note) }
    await collector.audited(session.principal, "note-add", "app \(app): \(note.id) \(text)")
    return Response(status: .seeOther, headers: [.location: SameSitePath.normalised(form.get("next"))])
  }

  func deleteNote(_ request: Request) async throws -> Response {
    let (session, form) = try await sessionForm(request, action: "deleting a note")
    let id = form.get("id") ?? ""
    guard let note = try await collector.storing("note", { try await collector.store.annotation(id: id) }) else {
      throw Refusal(.notFound, "id", "there is no note \(id)")
    }
    guard session.scope == .admin || note.createdBy == session.keyID else {
      throw Refusal(.forbidden, "id", "only its author (\(note.createdBy)) or an admin may delete this note")
    }
    _ = try await collector.storing("note") {
      try await collector.store.deleteAnnotation(id: id, at: EventCollector.now())
    }
    await collector.audited(session.principal, "note-delete", "app \(note.app): \(note.id) \(note.text)")
    return Response(status: .seeOther, headers: [.location: SameSitePath.normalised(form.get("next"))])
  }
}
