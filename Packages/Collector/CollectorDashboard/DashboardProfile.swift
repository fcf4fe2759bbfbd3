public import CollectorReports
import CollectorWire

extension Dashboard {
  /// A device's or a person's page: what their newest event says of them (app, platform, OS,
  /// model, locale, time zone), the users or devices seen with them, and their timeline in the
  /// range, newest first, by day (`rows`, a page; `next` opens older ones).
  public static func profile(_ search: EventSearch, count: Int64, rows: EventRows, context: Context) -> String {
    let who = search.user.map { "Person \($0)" } ?? "Device \(search.device ?? "")"
    var facts: [(String, String)] = [("Events in the range", String(count))]
    if let newest = rows.rows.first {
      facts.append(("Last seen", context.zone.iso(newest.occurredAt)))
      for field in [
        ContextField.appName, .appVersion, .platform, .osName, .osVersion, .deviceModel, .locale, .timeZone,
      ] {
        let value = newest.context[field]
        if !value.isEmpty { facts.append((label(field), value)) }
      }
    }
    let others = search.user == nil ? Set(rows.rows.compactMap(\.userID)) : Set(rows.rows.map(\.deviceID))
    var body = #"<dl class="facts">"#
    for (name, value) in facts { body += "<dt>\(SVG.escape(name))</dt><dd>\(SVG.escape(value))</dd>" }
    if !others.isEmpty {
      body += "<dt>\(search.user == nil ? "Signed in as" : "Devices")</dt><dd>"
      body +=
        others.sorted().map { other in
          let key = search.user == nil ? "user" : "device"
          return #"<a href="\#(SVG.escape(profileLink(context, key, other)))">\#(SVG.escape(other))</a>"#
        }.joined(separator: ", ") + "</dd>"
    }
    body += "</dl>"
    return page(
      who, body: card(who, body) + card("Timeline", timeline(rows, search: search, context: context)), context: context)
  }

  /// The events by local day, newest first, each linking to its kind in the search.
  private static func timeline(_ rows: EventRows, search: EventSearch, context: Context) -> String {
    guard !rows.rows.isEmpty else { return #"<p class="empty">No event in this range.</p>"# }
    var html = ""
    var day = ""
    for row in rows.rows {
      let time = context.zone.iso(row.occurredAt)
      if time.prefix(10) != day {
        html += (day.isEmpty ? "" : "</ol>") + "<h3>\(time.prefix(10))</h3><ol class=\"timeline\">"
        day = String(time.prefix(10))
      }
      let link = searchLink(context, search: [("event", row.name)])
      html +=
        #"<li><time>\#(time.dropFirst(11).prefix(8))</time> <a href="\#(SVG.escape(link))">\#(SVG.escape(row.name))</a>"#
      html += #" <code>\#(SVG.escape(row.parameters.text ?? "{}"))</code></li>"#
    }
    html += "</ol>"
    if let next = rows.next {
      let link = "/dashboard/profile?" + query(context.queryItems + search.queryItems + [("after", next)])
      html += #"<p><a href="\#(SVG.escape(link))" rel="next">Older events</a></p>"#
    }
    return html
  }

  /// The page of the device or user `value` (`key`: `device` or `user`) with this page's filter.
  static func profileLink(_ context: Context, _ key: String, _ value: String) -> String {
    "/dashboard/profile?" + query(context.queryItems + [(key, value)])
  }

  /// Search results: each device and user links to their page.
  static func eventTable(_ rows: EventRows, context: Context) -> String {
    var html = #"<div class="scroll"><table class="rows"><thead><tr><th>time</th><th>event</th><th>device</th>"#
    html += "<th>user</th><th>platform</th><th>app version</th><th>parameters</th></tr></thead><tbody>"
    for row in rows.rows {
      html += "<tr><td>\(SVG.escape(context.zone.iso(row.occurredAt)))</td><td>\(SVG.escape(row.name))</td>"
      html +=
        #"<td><a href="\#(SVG.escape(profileLink(context, "device", row.deviceID)))">\#(SVG.escape(row.deviceID))</a></td><td>"#
      if let user = row.userID {
        html += #"<a href="\#(SVG.escape(profileLink(context, "user", user)))">\#(SVG.escape(user))</a>"#
      }
      html += "</td><td>\(SVG.escape(row.platform))</td><td>\(SVG.escape(row.appVersion))</td>"
      html += #"<td class="wrap">\#(SVG.escape(row.parameters.text ?? "{}"))</td></tr>"#
    }
    return html + "</tbody></table></div>"
  }
}
