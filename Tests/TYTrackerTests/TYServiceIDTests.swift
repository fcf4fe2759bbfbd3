import CollectorService
import FirebaseService
import Foundation
import LogService
import MixpanelService
import TYTracker
import TestSupport
import Testing

/// The ids TYService names are the ids its services answer to: a feature's per-service payload
/// reaches the service it was written for.
@Suite("TYService ids")
struct TYServiceIDTests {
  @Test func eachIdIsTheOneItsServiceAnswersTo() throws {
    let directory = TemporaryDirectory()
    let folder = directory.url
    let collector = try CollectorService(
      endpoint: URL(string: "http://127.0.0.1:9")!, writeKey: "k", directory: folder.appendingPathComponent("c"))
    let firebase = try FirebaseService(
      firebaseAppID: "1:1:ios:1", apiSecret: "s", directory: folder.appendingPathComponent("f"))
    let mixpanel = try MixpanelService(mode: .track(token: "t"), directory: folder.appendingPathComponent("m"))
    #expect(LogService().id == TYService.log)
    #expect(collector.id == TYService.collector)
    #expect(firebase.id == TYService.firebase)
    #expect(mixpanel.id == TYService.mixpanel)
    #expect(Set([TYService.log, TYService.collector, TYService.firebase, TYService.mixpanel]).count == 4)
  }
}
