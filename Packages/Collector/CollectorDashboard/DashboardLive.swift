extension Dashboard {
  /// The live page: events of the app and environment as they are stored, newest first, beside the
  /// entries the collector refused (with their reasons) and the drops devices report. `event` and
  /// `device` narrow it to one event name or one device (empty: all).
  ///
  /// The page opens the stream `/dashboard/live-events` with ``liveScript``, the dashboard's only
  /// script; without scripts it says so.
  public static func live(event: String, device: String, context: Context) -> String {
    let stream =
      "/dashboard/live-events?"
      + query(
        [("app", context.app), ("environment", context.environment), ("event", event), ("device", device)]
          .filter { !$0.1.isEmpty })
    var form = #"<form method="get" action="/dashboard/live">"#
    form += context.queryItems.filter { ["app", "environment"].contains($0.0) }
      .map { #"<input type="hidden" name="\#($0.0)" value="\#(SVG.escape($0.1))">"# }.joined()
    form += #"<label>Event <input name="event" value="\#(SVG.escape(event))" placeholder="every event"></label>"#
    form += #"<label>Device <input name="device" value="\#(SVG.escape(device))" placeholder="every device"></label>"#
    form += "<button>Watch</button></form>"
    var body = #"<div id="live" data-stream="\#(SVG.escape(stream))">"#
    body += #"<p id="live-status" data-state="connecting">Connecting… (this page needs JavaScript)</p>"#
    body += #"<p id="live-counts" class="empty">Nothing yet: events appear here as they are stored.</p>"#
    body += #"<div class="scroll"><table class="rows live"><thead><tr><th>received</th><th>what</th><th>event</th>"#
    body += "<th>device</th><th>platform</th><th>parameters or reasons</th></tr></thead>"
    body += #"<tbody id="live-rows"></tbody></table></div></div>"#
    body += #"<script src="/dashboard/assets/live.js" defer></script>"#
    let about =
      "<p>What \(SVG.escape(context.app)) (\(SVG.escape(context.environment))) sends, as the collector keeps it: "
      + "stored events, entries refused and kept in the quarantine with their reasons, and events devices "
      + "reported dropping. Watching never slows ingestion; a page that falls behind skips the oldest and says "
      + "so.</p>"
    return page("Live", body: card("Live events", about + form) + card("As they arrive", body), context: context)
  }

  /// The live page's script: reads the stream named by `#live[data-stream]` with `EventSource` and
  /// puts each item at the top of the table (200 rows at most). Served as a file, so the
  /// Content-Security-Policy allows no inline script.
  public static let liveScript = """
    "use strict";
    (function () {
      var root = document.getElementById("live");
      if (!root) { return; }
      var rows = document.getElementById("live-rows");
      var status = document.getElementById("live-status");
      var summary = document.getElementById("live-counts");
      var counts = { event: 0, quarantined: 0, drop: 0 };
      function say(text, state) { status.textContent = text; status.dataset.state = state; }
      function cell(text, name) {
        var td = document.createElement("td");
        td.textContent = text;
        if (name) { td.className = name; }
        return td;
      }
      var source = new EventSource(root.dataset.stream);
      source.onopen = function () { say("Watching: the newest is at the top.", "open"); };
      source.onerror = function () { say("Disconnected; reconnecting…", "closed"); };
      source.addEventListener("skipped", function (message) {
        say("This page fell behind and skipped " + message.data + " items.", "open");
      });
      source.onmessage = function (message) {
        var item = JSON.parse(message.data);
        counts[item.kind] = (counts[item.kind] || 0) + 1;
        var row = document.createElement("tr");
        row.className = "live-" + item.kind;
        row.appendChild(cell(item.time.slice(11, 23)));
        row.appendChild(cell(item.kind === "event" ? "stored" : item.kind));
        row.appendChild(cell(item.name));
        row.appendChild(cell(item.device));
        row.appendChild(cell([item.platform, item.appVersion].filter(Boolean).join(" ")));
        row.appendChild(cell(item.reasons.length ? item.reasons.join("; ") : item.detail, "detail"));
        rows.insertBefore(row, rows.firstChild);
        while (rows.children.length > 200) { rows.removeChild(rows.lastChild); }
        summary.className = "";
        summary.textContent = counts.event + " stored · " + counts.quarantined + " quarantined · "
          + counts.drop + " drop reports since this page opened";
      };
    })();
    """
}
