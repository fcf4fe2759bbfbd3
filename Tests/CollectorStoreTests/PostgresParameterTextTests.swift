import Testing

@testable import CollectorPostgres

/// Which parameters' text PostgreSQL keeps beside their `jsonb` (``PostgresParameterText``): only
/// text that `jsonb` would give back in another order or spelling.
@Suite("PostgreSQL parameters as sent")
struct PostgresParameterTextTests {
  @Test(arguments: [
    (#"{}"#, true),
    (#"{"a":1,"b":2,"aa":3}"#, true),  // shorter first, then bytewise: jsonb's own order
    (#"{"id":"x","name":"true e","tags":["e","f"]}"#, true),  // letters inside strings are text
    (#"{"ok":true,"off":false,"none":null,"n":-1.25}"#, false),  // the shortest key last
    (#"{"n":-1.25,"ok":true,"off":false,"none":null}"#, true),
    (#"{"b":1,"a":2}"#, false),  // bytewise out of order
    (#"{"product_id":"p","in_stock":true}"#, false),  // the longer key first
    (#"{"a":{"bb":1,"c":2}}"#, false),  // out of order one level down
    (#"{"a":[{"c":1},{"bb":2}],"b":{}}"#, true),  // each object in order on its own
    (#"{"a":1,"a":2}"#, false),  // a key twice: jsonb keeps one
    (#"{"n":1e3}"#, false),  // jsonb prints 1000
    (#"{"n":2E-1}"#, false),
    (#"{"a\u0062":1}"#, false),  // an escaped key: kept as sent
    (#"{"a":"x\"y","b":"\\"}"#, true),  // escapes in values only
    (#"{"a":1"#, false),  // not well formed
    (#"{"a":1}}"#, false),
  ])
  func jsonbKeepsOrder(text: String, keeps: Bool) {
    #expect(PostgresParameterText.jsonbKeepsOrder(text) == keeps, "\(text)")
    #expect(PostgresParameterText.kept(text) == (keeps ? "" : text))
  }
}
