/// A note on the time charts of one app: a day and what happened then (a campaign, an outage),
/// written by a dashboard session. Releases need no note: they are read from the app versions
/// first seen.
public struct Annotation: Sendable, Hashable, Codable {
  /// A random id, 16 lowercase hex digits.
  public var id: String
  /// The app it belongs to.
  public var app: String
  /// When (ms, UTC): the start of the noted day in the zone it was written in.
  public var time: Int64
  /// What happened.
  public var text: String
  /// The public id of the key whose session wrote it, and when (ms, UTC).
  public var createdBy: String, createdAt: Int64

  /// A note.
  public init(id: String, app: String, time: Int64, text: String, createdBy: String, createdAt: Int64) {
    self.id = id
    self.app = app
    self.time = time
    self.text = text
    self.createdBy = createdBy
    self.createdAt = createdAt
  }
}

extension Annotation {
  /// The stored columns, in every engine's table order.
  public static let columns = "id, app, time, text, created_by, created_at"

  /// The note a row of ``columns`` holds.
  public init(_ row: SQLRow) {
    self.init(
      id: row["id"].text ?? "", app: row["app"].text ?? "", time: row["time"].int ?? 0, text: row["text"].text ?? "",
      createdBy: row["created_by"].text ?? "", createdAt: row["created_at"].int ?? 0)
  }
}

/// Notes on the time charts, kept in the store like saved views.
public protocol AnnotationStore: Sendable {
  /// Stores a note.
  func addAnnotation(_ annotation: Annotation) async throws

  /// The app's notes with `time` in `from..<to`, by time.
  func annotations(app: String, from: Int64, to: Int64) async throws -> [Annotation]

  /// The note with this id, if there is one.
  func annotation(id: String) async throws -> Annotation?

  /// Deletes the note (`at`: when, ms); `false` when there was none.
  func deleteAnnotation(id: String, at time: Int64) async throws -> Bool
}
