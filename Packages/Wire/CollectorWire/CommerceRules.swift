import Foundation

/// The collector's rules for the commerce vocabulary (GA4's keys, which `CommerceOrder` writes), one
/// rule on every route: an event breaking one is refused alone, with the path
/// (`parameters.items[2].price`), and quarantined; the reports could not count it.
///
/// - `currency`, when given, is an active ISO 4217 code (three capital letters from the standard's
///   list: `TRY`, `USD`, `EUR`; not `usd`, `""` or `<script>`).
/// - `value`, when given, is a finite number of at most ``maximumAmount`` in size, negative only on a
///   `refund`.
/// - `items` is a list of objects; in each, `quantity` (when given) is a whole number from 1 to
///   ``maximumQuantity``, and `price` a finite number, negative only on a `refund`, whose size times
///   the quantity is at most ``maximumAmount``.
/// - A `refund` says what was refunded: a `value`, or `items` (without either the revenue report
///   could only count it as a refund of 0).
public enum CommerceRules {
  /// The largest amount an order or an item line may come to (10^12 of its currency).
  public static let maximumAmount = 1e12
  /// The most units of one item in one order.
  public static let maximumQuantity: Int64 = 1_000_000

  /// Where an event's commerce parameters break a rule and why (`parameters.items[2].price`), or `nil`.
  public static func problem(event name: String, parameters: JSONObject) -> (
    path: String, reason: String
  )? {
    let refund = name == "refund"
    if let currency = parameters["currency"] {
      guard case .string(let code) = currency, currencies.contains(code) else {
        return ("parameters.currency", "must be an ISO 4217 currency code (three capital letters, e.g. TRY)")
      }
    }
    if let value = parameters["value"] {
      guard let amount = value.number, amount.isFinite, abs(amount) <= maximumAmount, amount >= 0 || refund else {
        return ("parameters.value", "must be a number of at most 10^12, negative only on a refund")
      }
    }
    if let items = parameters["items"], let problem = problem(inItems: items, refund: refund) {
      return ("parameters.items" + problem.path, problem.reason)
    }
    let itemless = parameters["items"].map { $0 == .array([]) } ?? true
    if refund, parameters["value"] == nil, itemless {
      return ("parameters.value", "is required on a refund without items: say how much was refunded")
    }
    return nil
  }

  /// The same for parameters stored as a JSON object (the vendor routes); `nil` for text that is
  /// not one (other rules refuse it).
  public static func problem(event name: String, parametersJSON: String) -> (path: String, reason: String)? {
    guard let parameters = StoredParameters.parse(parametersJSON) else { return nil }
    return problem(event: name, parameters: parameters)
  }

  /// Where in `items` (relative to it, `[2].quantity`) a rule is broken and why, or `nil`.
  public static func problem(inItems items: JSONValue, refund: Bool = false) -> (path: String, reason: String)? {
    guard case .array(let elements) = items else { return ("", "must be a list of items (objects)") }
    for (position, element) in elements.enumerated() {
      guard case .object(let fields) = element else { return ("[\(position)]", "must be an item (an object)") }
      var units: Int64 = 1
      if let quantity = fields["quantity"] {
        guard case .int(let count) = quantity, (1...maximumQuantity).contains(count) else {
          return ("[\(position)].quantity", "must be a whole number from 1 to \(maximumQuantity)")
        }
        units = count
      }
      if let price = fields["price"] {
        guard let amount = price.number, amount.isFinite else { return ("[\(position)].price", "must be a number") }
        guard amount >= 0 || refund else { return ("[\(position)].price", "must not be negative (only on a refund)") }
        guard abs(amount) * Double(units) <= maximumAmount else {
          return ("[\(position)].price", "times the quantity must be at most 10^12")
        }
      }
    }
    return nil
  }

  /// The active ISO 4217 codes (funds and metals included, as GA4 accepts them).
  public static let currencies: Set<String> = Set(
    """
    AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN BWP BYN BZD CAD CDF \
    CHE CHF CHW CLF CLP CNY COP COU CRC CUC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD \
    GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR \
    LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK \
    PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL THB TJS TMT \
    TND TOP TRY TTD TWD TZS UAH UGX USD USN UYI UYU UYW UZS VED VES VND VUV WST XAF XAG XAU XBA XBB XBC XBD XCD XCG \
    XDR XOF XPD XPF XPT XSU XTS XUA XXX YER ZAR ZMW ZWG ZWL
    """.split(separator: " ").map(String.init))
}

extension JSONValue {
  /// The value as a number, when it is one.
  var number: Double? {
    switch self {
    case .int(let value): Double(value)
    case .double(let value): value
    default: nil
    }
  }
}
