public import CollectorReports
import Foundation

extension Dashboard {
  /// Revenue per currency against the previous range, net revenue per day of the main currency,
  /// and the top items (by category or brand when picked).
  public static func revenue(_ revenue: Revenue, items: TopItems, context: Context) -> String {
    var body = #"<section class="figures">"#
    for figures in revenue.current {
      let currency = figures.currency.isEmpty ? "(no currency)" : figures.currency
      let before = revenue.previous(figures.currency)?.net ?? 0
      let change = before == 0 ? "new" : String(format: "%+.0f%%", (figures.net - before) * 100 / abs(before))
      body += figure("Net \(currency)", Money.text(figures.net), note: "\(change) vs previous")
      body += figure("Orders \(currency)", String(figures.orders), note: "AOV \(Money.text(figures.averageOrderValue))")
      body += figure(
        "Refunds \(currency)", Money.text(figures.refunds), note: "\(figures.refundCount) refunds")
    }
    body += "</section>"
    if let main = revenue.current.first {
      let days = revenue.days.filter { $0.currency == main.currency }
      let before = revenue.previousDays.filter { $0.currency == main.currency }
      let title = "Net revenue per day (\(main.currency.isEmpty ? "no currency" : main.currency))"
      let chart =
        SVG.lineChart(
          days.map { (label: String(context.zone.iso($0.start).prefix(10)), value: $0.net) }, title: title,
          marks: positions(context.marks, starts: days.map(\.start)), previous: before.map(\.net)) + legend
        + markList(context)
      body += card(title, chart, csv: csvLink(context, "revenue"))
    } else {
      body += card("Revenue", #"<p class="empty">No purchases in this range.</p>"#)
    }
    body += #"<form class="pick" method="get" action="/dashboard/revenue">\#(hiddenFilter(context))"#
    body += #"<label>Category <input name="category" value="\#(SVG.escape(items.category ?? ""))"></label>"#
    body += #"<label>Brand <input name="brand" value="\#(SVG.escape(items.brand ?? ""))"></label>"#
    body += "<button>Show</button></form>"
    let picked = [("category", items.category ?? ""), ("brand", items.brand ?? ""), ("limit", "20")]
    body += card(
      "Top items by revenue", itemBars(items) + table(items.table),
      csv: csvLink(context, "top-items", picked.filter { !$0.1.isEmpty }))
    return page("Revenue", body: body, context: context)
  }

  private static func figure(_ name: String, _ value: String, note: String) -> String {
    #"<div class="figure"><span class="name">\#(SVG.escape(name))</span><span class="value">\#(SVG.escape(value))</span>"#
      + #"<span class="change">\#(SVG.escape(note))</span></div>"#
  }

  private static func itemBars(_ items: TopItems) -> String {
    guard !items.rows.isEmpty else { return #"<p class="empty">No items sold in this range.</p>"# }
    return SVG.bars(
      items.rows.map {
        (
          label: $0.name.isEmpty || $0.name == $0.item ? $0.item : "\($0.name) (\($0.item))", value: $0.revenue,
          note: "\(Money.text($0.revenue)) \($0.currency) · \($0.units) units · \($0.buyers) buyers"
        )
      }, title: "items")
  }
}
