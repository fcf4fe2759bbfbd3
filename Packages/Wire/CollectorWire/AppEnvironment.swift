/// The environments an app's data is kept apart by: `production` (the default), `development`,
/// `internal` or any name the app chooses.
///
/// The one declaration of what an environment name may be and of how the collector keeps each
/// environment's data apart. A write key names an app (`shop`) or an app in one environment
/// (`shop@development`): a key bound to an environment decides the environment of everything it
/// sends; a key without one takes the batch's `context.environment`, and an event without one (an
/// older client, SimpleAnalytics, GA4, Mixpanel, Segment) is `production`. Production's data is
/// stored under the app itself (`shop`), every other environment's under the app and its name
/// (`shop@development`): every table, rollup, report, erasure and retention rule keys on that, so
/// two environments never meet in one answer.
public enum AppEnvironment {
  /// The environment of every event that names none.
  public static let production = "production"
  /// What joins an app and an environment in a write key and in the stored app (`shop@development`).
  public static let separator: Character = "@"
  /// The most bytes of an environment's name.
  public static let maximumNameBytes = 32
  /// What an environment's name must be.
  public static let nameRule =
    "must be 1 to \(maximumNameBytes) lowercase letters, digits, '-' or '_', starting with a letter or digit"

  /// Whether `name` is a valid environment name (``nameRule``).
  public static func isName(_ name: String) -> Bool {
    let bytes = Array(name.utf8)
    guard !bytes.isEmpty, bytes.count <= maximumNameBytes else { return false }
    func isAlphanumeric(_ byte: UInt8) -> Bool {
      (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
    return isAlphanumeric(bytes[0])
      && bytes.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
  }

  /// The app data of `environment` is stored under: the app for production, `app@environment`
  /// otherwise.
  public static func storedApp(_ app: String, environment: String) -> String {
    environment.isEmpty || environment == production ? app : "\(app)\(separator)\(environment)"
  }

  /// A write key's target or a stored app split into the app and the environment it names, if any
  /// (`shop@development` → `shop`, `development`; `shop` → `shop`, `nil`).
  public static func split(_ target: String) -> (app: String, environment: String?) {
    guard let index = target.lastIndex(of: separator) else { return (target, nil) }
    return (String(target[..<index]), String(target[target.index(after: index)...]))
  }

  /// Where an event sent with a write key for `target` is stored, and its environment: the key's
  /// environment when it names one, else `sent` (the batch's `context.environment`), else
  /// production.
  public static func resolve(target: String, sent: String) -> (storedApp: String, environment: String) {
    let (app, bound) = split(target)
    let environment = bound ?? (sent.isEmpty ? production : sent)
    return (storedApp(app, environment: environment), environment)
  }

  /// Throws ``FieldError`` for `field` unless `target` is an app (1 to 64 bytes, no `@`) or an app
  /// and a valid environment name joined by `@`.
  public static func checkTarget(_ target: String, field: String) throws(FieldError) {
    let (app, environment) = split(target)
    guard !app.isEmpty, app.utf8.count <= 64, !app.contains(separator) else {
      throw FieldError(field: field, reason: "the app must be 1 to 64 bytes without '\(separator)' (\(app.prefix(64)))")
    }
    if let environment, !isName(environment) {
      throw FieldError(field: field, reason: "the environment \(environment.prefix(64)) \(nameRule)")
    }
  }
}

extension AppEnvironment {
  /// The apps of `stored` (a store's apps, environments among them: `shop`, `shop@development`),
  /// each with the environments it has data in: production first, then the others by name.
  public static func catalog(_ stored: [String]) -> [(app: String, environments: [String])] {
    var environments: [String: Set<String>] = [:]
    for target in stored {
      let (app, environment) = split(target)
      environments[app, default: []].insert(environment ?? production)
    }
    return environments.keys.sorted().map { app in
      let names = environments[app, default: []]
      return (app, names.sorted { ($0 == production ? 0 : 1, $0) < ($1 == production ? 0 : 1, $1) })
    }
  }
}
