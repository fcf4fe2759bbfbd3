import Foundation

/// Charts drawn on the server as inline SVG: no JavaScript, no CDN, scales with the page width; a
/// bar or a point may link to the events behind it.
public enum SVG {
  /// Text safe inside HTML and SVG.
  public static func escape(_ text: String) -> String {
    var result = ""
    result.reserveCapacity(text.count)
    for character in text {
      switch character {
      case "&": result += "&amp;"
      case "<": result += "&lt;"
      case ">": result += "&gt;"
      case "\"": result += "&quot;"
      case "'": result += "&#39;"
      default: result.append(character)
      }
    }
    return result
  }

  /// A line chart: one `<circle class="point">` per value (with its label and value as a tooltip),
  /// a polyline through them, the largest value on the axis; below a zero line when values are
  /// negative (a day of refunds).
  /// `links`, by point, opens what a point counts (none where it is `nil` or missing).
  ///
  /// `marks` (releases, notes) are dashed lines at their points with their numbers, their text as a
  /// tooltip. `previous`, by point, is the range before, drawn as a dashed grey line under the series.
  public static func lineChart(
    _ points: [(label: String, value: Double)], title: String, links: [String?] = [],
    marks: [(index: Int, number: Int, label: String)] = [], previous: [Double] = []
  ) -> String {
    let width = 640.0
    let height = 220.0
    let left = 48.0
    let bottom = 24.0
    let top = 12.0
    let previous = Array(previous.prefix(points.count))
    let maximum = max(1, (points.map(\.value) + previous).max() ?? 1)
    let minimum = min(0, points.map(\.value).min() ?? 0)
    let step = points.count > 1 ? (width - left - 8) / Double(points.count - 1) : 0
    func x(_ index: Int) -> Double { left + Double(index) * step }
    func y(_ value: Double) -> Double { top + (height - top - bottom) * (maximum - value) / (maximum - minimum) }
    var svg =
      #"<svg class="chart line" viewBox="0 0 \#(Int(width)) \#(Int(height))" role="img" aria-label="\#(escape(title))">"#
    svg += "<title>\(escape(title))</title>"
    svg += #"<line class="axis" x1="\#(left)" y1="\#(y(0))" x2="\#(width - 4)" y2="\#(y(0))"/>"#
    svg += #"<text class="tick" x="4" y="\#(top + 10)">\#(format(maximum))</text>"#
    svg += #"<text class="tick" x="4" y="\#(y(0))">0</text>"#
    if minimum < 0 { svg += #"<text class="tick" x="4" y="\#(height - bottom)">\#(format(minimum))</text>"# }
    for mark in marks where points.indices.contains(mark.index) {
      let at = x(mark.index)
      svg += #"<g class="mark"><title>\#(escape(points[mark.index].label)): \#(escape(mark.label))</title>"#
      svg += #"<line x1="\#(at)" y1="\#(top)" x2="\#(at)" y2="\#(height - bottom)"/>"#
      svg += #"<text class="tick" x="\#(at + 3)" y="\#(top + 10)">\#(mark.number)</text></g>"#
    }
    if !previous.isEmpty {
      let line = previous.indices.map { String(format: "%.1f,%.1f", x($0), y(previous[$0])) }.joined(separator: " ")
      svg += #"<polyline class="series previous" points="\#(line)"><title>The range before</title></polyline>"#
    }
    let path = points.indices.map { String(format: "%.1f,%.1f", x($0), y(points[$0].value)) }.joined(separator: " ")
    if !points.isEmpty { svg += #"<polyline class="series" points="\#(path)"/>"# }
    for (index, point) in points.enumerated() {
      let link = index < links.count ? links[index] : nil
      if let link { svg += #"<a href="\#(escape(link))">"# }
      svg += String(format: #"<circle class="point" cx="%.1f" cy="%.1f" r="3">"#, x(index), y(point.value))
      svg += "<title>\(escape(point.label)): \(format(point.value))</title></circle>"
      if link != nil { svg += "</a>" }
    }
    if let first = points.first, let last = points.last {
      svg += #"<text class="tick" x="\#(left)" y="\#(height - 6)">\#(escape(first.label))</text>"#
      svg += #"<text class="tick end" x="\#(width - 4)" y="\#(height - 6)">\#(escape(last.label))</text>"#
    }
    return svg + "</svg>"
  }

  /// Horizontal bars as HTML (labels wrap, text keeps its size on a phone): a row per entry with
  /// its label, a `<span class="bar">` as wide as its share of the largest value, and a note
  /// (count, share). `links`, by row, makes the row a link to what it counts (none where `nil`).
  public static func bars(
    _ rows: [(label: String, value: Double, note: String)], title: String, links: [String?] = []
  ) -> String {
    let maximum = max(1, rows.map(\.value).max() ?? 1)
    var html = #"<div class="bars" role="list" aria-label="\#(escape(title))">"#
    for (index, row) in rows.enumerated() {
      let link = index < links.count ? links[index] : nil
      let width = String(format: "%.1f", max(0.5, 100 * max(0, row.value) / maximum))
      html +=
        link.map { #"<a class="row drill" role="listitem" href="\#(escape($0))">"# }
        ?? #"<div class="row" role="listitem">"#
      html += #"<span class="label">\#(escape(row.label))</span><span class="track">"#
      html += #"<span class="bar" style="width:\#(width)%"></span></span>"#
      html += #"<span class="note">\#(escape(row.note))</span>"# + (link == nil ? "</div>" : "</a>")
    }
    return html + "</div>"
  }

  /// A number for an axis or a note: whole numbers without decimals, others with one.
  public static func format(_ value: Double) -> String {
    value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(format: "%.1f", value)
  }
}
