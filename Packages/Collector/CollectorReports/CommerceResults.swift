import Foundation

/// Revenue per currency: orders, gross revenue, refunds, net revenue and average order value, for
/// the range and the range before it, and net revenue and orders per UTC day of the range.
///
/// Read from `purchase` and `refund` events (GA4's names, which ``CommerceOrder`` and the product
/// trackers use) and their `currency`, `value` and `transaction_id` parameters. A purchase counts
/// once per transaction id (its first event by id: a purchase tracked twice is one order, as GA4
/// de-duplicates); a refund
/// counts per event (partial refunds add up). Amounts that are not numbers, or of 10^15 or more, are
/// left out; a missing currency is reported as `""`.
public struct Revenue: ReportResult, Hashable {
  /// The money of one currency in one range.
  public struct Figures: Sendable, Hashable, Codable {
    /// The ISO 4217 code as sent (`TRY`); `""` when the events named none.
    public var currency: String
    /// Purchases (distinct transactions).
    public var orders: Int64
    /// The sum of the purchases' values.
    public var gross: Double
    /// Refund events.
    public var refundCount: Int64
    /// The sum of the refunds' values.
    public var refunds: Double

    /// Figures.
    public init(currency: String, orders: Int64, gross: Double, refundCount: Int64, refunds: Double) {
      self.currency = currency
      self.orders = orders
      self.gross = gross
      self.refundCount = refundCount
      self.refunds = refunds
    }

    /// Gross revenue less refunds.
    public var net: Double { gross - refunds }
    /// Gross revenue per order (0 without orders).
    public var averageOrderValue: Double { orders == 0 ? 0 : gross / Double(orders) }
  }

  /// One UTC day of one currency.
  public struct Day: Sendable, Hashable, Codable {
    /// The day's start (ms since 1970, UTC).
    public var start: Int64
    /// The currency.
    public var currency: String
    /// Purchases on the day.
    public var orders: Int64
    /// Gross revenue less refunds on the day.
    public var net: Double

    /// A day.
    public init(start: Int64, currency: String, orders: Int64, net: Double) {
      self.start = start
      self.currency = currency
      self.orders = orders
      self.net = net
    }
  }

  /// Each currency of the range, largest gross revenue first.
  public var current: [Figures]
  /// The same currencies (and any others) in the range of the same length before.
  public var previous: [Figures]
  /// Every day of the range for every currency of ``current``, in order (days without sales at 0).
  public var days: [Day]
  /// The same for the range of the same length before, day by day (to draw under ``days``).
  public var previousDays: [Day]

  /// A revenue report.
  public init(current: [Figures], previous: [Figures], days: [Day], previousDays: [Day] = []) {
    self.current = current
    self.previous = previous
    self.days = days
    self.previousDays = previousDays
  }

  /// The figures of the range before for `currency`, if it had any.
  public func previous(_ currency: String) -> Figures? { previous.first { $0.currency == currency } }

  public var table: ReportTable {
    ReportTable(
      columns: ["currency", "orders", "gross", "refunds", "net", "average order", "net before", "change"],
      rows: current.map { now in
        let before = previous(now.currency)?.net ?? 0
        return [
          now.currency.isEmpty ? "(none)" : now.currency, String(now.orders), Money.text(now.gross),
          Money.text(now.refunds), Money.text(now.net), Money.text(now.averageOrderValue), Money.text(before),
          before == 0 ? "" : String(format: "%+.1f%%", (now.net - before) * 100 / abs(before)),
        ]
      })
  }
}

/// The best-selling items: units, revenue, orders and distinct buyers per item and currency, with
/// the item's latest name; most revenue first.
///
/// Read from the `items` of `purchase` events: an item is keyed by its `item_id` (by its
/// `item_name` when it has no id), its units are its `quantity` (1 when absent; items with a
/// quantity below 1 are left out), its revenue `price` × quantity in the event's `currency`.
public struct TopItems: ReportResult, Hashable {
  /// One item in one currency.
  public struct Row: Sendable, Hashable, Codable {
    /// The item's id (or name, for items sent without an id).
    public var item: String
    /// The name the latest purchase gave it (`""` when none did).
    public var name: String
    /// The currency of its revenue.
    public var currency: String
    /// Units sold.
    public var units: Int64
    /// Price × quantity, summed.
    public var revenue: Double
    /// Purchases (distinct transactions) that held it.
    public var orders: Int64
    /// Distinct devices that bought it.
    public var buyers: Int64

    /// A row.
    public init(
      item: String, name: String, currency: String, units: Int64, revenue: Double, orders: Int64, buyers: Int64
    ) {
      self.item = item
      self.name = name
      self.currency = currency
      self.units = units
      self.revenue = revenue
      self.orders = orders
      self.buyers = buyers
    }
  }

  /// The category the items were filtered by (`item_category`), if any.
  public var category: String?
  /// The brand the items were filtered by (`item_brand`), if any.
  public var brand: String?
  /// The items, most revenue first, then by id.
  public var rows: [Row]

  /// A top-items report.
  public init(category: String?, brand: String?, rows: [Row]) {
    self.category = category
    self.brand = brand
    self.rows = rows
  }

  public var table: ReportTable {
    ReportTable(
      columns: ["item", "name", "currency", "units", "revenue", "orders", "buyers"],
      rows: rows.map {
        [
          $0.item, $0.name, $0.currency, String($0.units), Money.text($0.revenue), String($0.orders),
          String($0.buyers),
        ]
      })
  }
}

/// Amounts as the reports and the dashboard print them: two decimals (the minor unit of most
/// currencies).
public enum Money {
  /// `amount` with two decimals (`1019.99`).
  public static func text(_ amount: Double) -> String { String(format: "%.2f", amount) }
}
