public import CollectorReports
public import CollectorStore

/// A mark on the time charts: a release (an app version first seen) or a note someone wrote.
public struct ChartMark: Sendable, Hashable {
  /// When (ms, UTC).
  public var time: Int64
  /// What it says (`10.0 released`, or the note's text).
  public var text: String
  /// The note behind it; `nil` for a release.
  public var note: Annotation?

  /// A mark.
  public init(time: Int64, text: String, note: Annotation? = nil) {
    self.time = time
    self.text = text
    self.note = note
  }

  /// The releases in `adoption`: each app version at the first day it has devices, when that day is
  /// `from` or later (a version seen before the range was released before it).
  public static func releases(_ adoption: VersionAdoption, from: Int64) -> [ChartMark] {
    var first: [String: Int64] = [:]
    for point in adoption.points where point.devices > 0 && !point.appVersion.isEmpty {
      first[point.appVersion] = min(first[point.appVersion] ?? .max, point.day)
    }
    return first.filter { $0.value >= from }.map { ChartMark(time: $0.value, text: "\($0.key) released") }
      .sorted { ($0.time, $0.text) < ($1.time, $1.text) }
  }
}

extension Dashboard {
  /// The marks as chart positions, numbered as ``markList(_:)`` lists them: each at the last point
  /// starting at or before it.
  static func positions(_ marks: [ChartMark], starts: [Int64]) -> [(index: Int, number: Int, label: String)] {
    marks.enumerated().compactMap { number, mark in
      starts.lastIndex { $0 <= mark.time }.map { (index: $0, number: number + 1, label: mark.text) }
    }
  }

  /// The releases and notes of the page's range under a chart, each note with its author, and
  /// (signed-in sessions) the form that adds a note; its author or an admin may delete one.
  static func markList(_ context: Context) -> String {
    var html = ""
    if !context.marks.isEmpty {
      html += #"<ul class="marks">"#
      for mark in context.marks {
        html +=
          "<li><time>\(SVG.escape(String(context.zone.iso(mark.time).prefix(10))))</time> \(SVG.escape(mark.text))"
        if let note = mark.note {
          html += " <span class=\"by\">(\(SVG.escape(note.createdBy)))</span>"
          if !context.csrf.isEmpty && (context.isAdmin || note.createdBy == context.viewer) {
            html += #"<form class="inline" method="post" action="/annotations/delete">\#(noteFields(context))"#
            html += #"<input type="hidden" name="id" value="\#(note.id)"><button>Delete</button></form>"#
          }
        }
        html += "</li>"
      }
      html += "</ul>"
    }
    guard !context.csrf.isEmpty else { return html }
    html += #"<form method="post" action="/annotations/add">\#(noteFields(context))"#
    html += #"<label>Day <input type="date" name="day" value="\#(SVG.escape(context.to))" required></label>"#
    html += #"<label>Note <input name="text" maxlength="200" required placeholder="Campaign started"></label>"#
    return html + "<button>Add note</button></form>"
  }

  private static func noteFields(_ context: Context) -> String {
    let back = context.path + (context.pageQuery.isEmpty ? "" : "?" + context.pageQuery)
    return #"<input type="hidden" name="csrf" value="\#(SVG.escape(context.csrf))">"#
      + #"<input type="hidden" name="app" value="\#(SVG.escape(context.app))">"#
      + #"<input type="hidden" name="tz" value="\#(SVG.escape(context.zone.identifier))">"#
      + #"<input type="hidden" name="next" value="\#(SVG.escape(back))">"#
  }
}
