public import CollectorReports

extension Dashboard {
  /// The quarantine: held entries counted by route and reason, the newest entries with their
  /// reasons, and (admins) the button that replays them under today's rules.
  ///
  /// `counts` has columns route, reason, entries; `entries` received, route, id, reasons;
  /// `replayed` is the outcome of a replay just run, said above the tables.
  ///
  /// `drops`, when given, is what the app's devices reported dropping over the page's days (the
  /// events that never arrived, beside those that arrived and were refused).
  public static func quarantine(
    drops: ClientDrops? = nil, counts: ReportTable, entries: ReportTable, replayed: String?, context: Context
  ) -> String {
    var body = ""
    if let replayed { body += card("Replay", "<p>\(SVG.escape(replayed))</p>") }
    var actions =
      "<p>Entries the collector refused, kept with every reason. Raise a limit in the configuration or deploy a "
      + "fix, restart, then replay: what passes is stored once; the rest stays with its new reasons.</p>"
    if context.isAdmin && !context.csrf.isEmpty {
      actions += #"<form method="post" action="/quarantine/replay">"#
      actions += #"<input type="hidden" name="csrf" value="\#(SVG.escape(context.csrf))">"#
      actions += #"<input type="hidden" name="app" value="\#(SVG.escape(context.app))">"#
      actions += "<button>Replay held entries of \(SVG.escape(context.app))</button></form>"
    }
    body += card("Quarantine", actions)
    body += card("Held entries by reason", counts.rows.isEmpty ? #"<p class="empty">Nothing held.</p>"# : table(counts))
    body += card("Newest entries", entries.rows.isEmpty ? #"<p class="empty">Nothing held.</p>"# : table(entries))
    if let drops {
      let text =
        "<p>\(SVG.escape(drops.summary)) (\(SVG.escape(context.from)) to \(SVG.escape(context.to)), "
        + "as devices reported them; these events never reached the collector).</p>"
      body += card("Dropped on devices", drops.drops.isEmpty ? text : text + table(drops.table))
    }
    return page("Quarantine", body: body, context: context)
  }
}
