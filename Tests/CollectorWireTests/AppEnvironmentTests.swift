import CollectorWire
import Testing

@Suite("App environments")
struct AppEnvironmentTests {
  @Test(
    "a key's target and the batch's environment decide where an event is stored",
    arguments: [
      ("ty", "", "ty", "production"), ("ty", "production", "ty", "production"),
      ("ty", "development", "ty@development", "development"), ("ty", "qa-2", "ty@qa-2", "qa-2"),
      ("ty@production", "development", "ty", "production"), ("ty@development", "", "ty@development", "development"),
      ("ty@development", "production", "ty@development", "development"),
      ("ty@internal", "development", "ty@internal", "internal"),
    ])
  func resolve(target: String, sent: String, storedApp: String, environment: String) {
    let resolved = AppEnvironment.resolve(target: target, sent: sent)
    #expect(resolved.storedApp == storedApp && resolved.environment == environment)
    // Resolving what was stored again changes nothing (a replay, a second commit).
    #expect(AppEnvironment.resolve(target: resolved.storedApp, sent: resolved.environment) == resolved)
  }

  @Test(
    "names: lowercase letters, digits, '-' and '_', 1 to 32 bytes",
    arguments: [
      ("production", true), ("development", true), ("qa-2", true), ("staging_eu", true), ("", false),
      ("Dev", false), ("dev build", false), ("-dev", false), ("dev@x", false),
      (String(repeating: "a", count: 32), true),
      (String(repeating: "a", count: 33), false), ("dév", false),
    ])
  func names(name: String, valid: Bool) {
    #expect(AppEnvironment.isName(name) == valid)
  }

  @Test(
    "a write key's target is an app, or an app and a valid environment",
    arguments: [
      ("ty", true), ("ty@development", true), ("ty@Dev", false), ("@development", false), ("ty@dev@x", false),
      (String(repeating: "a", count: 65), false),
    ])
  func targets(target: String, valid: Bool) {
    #expect(((try? AppEnvironment.checkTarget(target, field: "write-keys")) != nil) == valid)
  }

  @Test("a store's apps are listed once each, with their environments, production first")
  func catalog() {
    let catalog = AppEnvironment.catalog(["ty@internal", "dl", "ty", "ty@development", "dl@development"])
    #expect(catalog.map(\.app) == ["dl", "ty"])
    #expect(
      catalog.map(\.environments) == [["production", "development"], ["production", "development", "internal"]])
    #expect(AppEnvironment.catalog(["ty@development"]).first?.environments == ["development"])
  }
}
