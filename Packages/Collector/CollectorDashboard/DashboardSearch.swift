public import CollectorReports
import CollectorWire

extension Dashboard {
  /// The search page: a query builder over every stored dimension (the header's filter, and the
  /// event, device, user, any other context field and parameters), the number of matching events
  /// and their rows, newest first, a page at a time (`next` opens the page after).
  ///
  /// `names` are the events to pick from (the range's top events).
  public static func search(
    _ search: EventSearch, count: Int64, rows: EventRows, names: [String], context: Context
  ) -> String {
    var form = #"<form class="pick" method="get" action="/dashboard/search">\#(hiddenFilter(context))"#
    form += field("Event", "event", search.event ?? "", hint: "every event", list: "event-names")
    form += #"<datalist id="event-names">\#(names.map { option($0, selected: false) }.joined())</datalist>"#
    form += field("Device", "device", search.device ?? "", hint: "any device")
    form += field("User", "user", search.user ?? "", hint: "any user")
    form += field(
      "Parameters", "parameters", search.parameters.map { "\($0.key)=\($0.value)" }.joined(separator: "; "),
      hint: "price=129.9; in_stock=true")
    for contextField in EventSearch.contextFields {
      form += field(label(contextField), contextField.rawValue, search.context[contextField] ?? "", hint: "any")
    }
    form += "<button>Search</button></form>"
    var result = #"<p class="count"><strong>\#(count)</strong> \#(count == 1 ? "event matches" : "events match") "#
    result += "(\(SVG.escape(context.rangeLine))).</p>"
    if rows.rows.isEmpty {
      result += #"<p class="empty">No event matches.</p>"#
    } else {
      result += eventTable(rows, context: context)
      let csv = csvLink(context, "events", search.queryItems + [("limit", "1000")])
      result += #"<p><a href="\#(SVG.escape(csv))">Download CSV</a> (1,000 rows)"#
      if let next = rows.next {
        let link = "/dashboard/search?" + query(context.queryItems + search.queryItems + [("after", next)])
        result += #" · <a href="\#(SVG.escape(link))" rel="next">Older events</a>"#
      }
      result += "</p>"
    }
    return page("Search", body: card("Search events", form) + card("Matching events", result), context: context)
  }

  /// A labelled text field of the search form.
  private static func field(_ label: String, _ name: String, _ value: String, hint: String, list: String? = nil)
    -> String
  {
    let listAttribute = list.map { #" list="\#($0)""# } ?? ""
    return #"<label>\#(SVG.escape(label)) <input name="\#(name)" value="\#(SVG.escape(value))" "#
      + #"placeholder="\#(SVG.escape(hint))"\#(listAttribute)></label>"#
  }

  /// `deviceModel` as `Device model`.
  static func label(_ field: ContextField) -> String {
    let words = field.column.split(separator: "_").joined(separator: " ")
    return words.prefix(1).uppercased() + words.dropFirst()
  }
}
