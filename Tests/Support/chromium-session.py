#!/usr/bin/env python3
"""Drives a headless Chromium through one dashboard session, as a person would, and prints what
happened as JSON (for DashboardBrowserTests).

It speaks the DevTools protocol over --remote-debugging-pipe (file descriptors 3 and 4, messages
ended by NUL), so it needs nothing but Python's standard library. Steps: open the sign-in page,
type the key into the form and submit it, read the browser's history and cookies, open each page
(its DOM and console errors), take screenshots, watch the live page while requests are sent
(optional), press "Sign out", and read the page after.

Usage: chromium-session.py '<json>' with keys chromium, base, key, profile, pages, screenshots
([[path, width, height, page], ...]; JPEG when the path ends in .jpg), live ({"path", "posts": [{"url", "headers", "body"}],
"expect": [text, ...]}) and steps, run right after signing in ([{"open": path} | {"submit": form
selector, "fill": [[selector, value], ...]} | {"follow": link selector} | {"eval": script} | {"tabTo": selector:
Tab pressed until it focuses a match, then Enter; with the trail of focused elements}, ...], each reported with the
page it led to) and measure ([[width, height, page, dark], ...]: the smallest text on screen in CSS pixels,
the page's width, the bar labels cut short and the background, at that size and color scheme). Every wait is bounded; the whole run
stops after 120 s.
"""
import base64, json, os, select, subprocess, sys, time, urllib.error, urllib.request

config = json.loads(sys.argv[1])
deadline = time.time() + 120
to_browser_read, to_browser_write = os.pipe()
from_browser_read, from_browser_write = os.pipe()


def child_fds():
    os.dup2(to_browser_read, 3)
    os.dup2(from_browser_write, 4)


browser = subprocess.Popen(
    [config["chromium"], "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
     "--disable-dev-shm-usage", "--no-first-run", "--user-data-dir=" + config["profile"], "about:blank"],
    pass_fds=(3, 4), preexec_fn=child_fds, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
os.close(to_browser_read)
os.close(from_browser_write)
pending = b""
events = []
next_id = [0]
console = []


def send(method, params=None, session=None):
    next_id[0] += 1
    message = {"id": next_id[0], "method": method, "params": params or {}}
    if session:
        message["sessionId"] = session
    os.write(to_browser_write, json.dumps(message).encode() + b"\0")
    return next_id[0]


def receive():
    global pending
    while b"\0" not in pending:
        remaining = deadline - time.time()
        if remaining <= 0:
            raise TimeoutError("Chromium did not answer in time")
        ready, _, _ = select.select([from_browser_read], [], [], remaining)
        if ready:
            chunk = os.read(from_browser_read, 1 << 20)
            if not chunk:
                raise EOFError("Chromium closed the pipe")
            pending += chunk
    message, pending = pending.split(b"\0", 1)
    decoded = json.loads(message)
    if decoded.get("method") == "Runtime.consoleAPICalled" and decoded["params"].get("type") == "error":
        console.append(" ".join(str(a.get("value", a.get("description", ""))) for a in decoded["params"]["args"]))
    if decoded.get("method") == "Log.entryAdded" and decoded["params"]["entry"].get("level") == "error":
        entry = decoded["params"]["entry"]
        if "favicon" not in entry.get("url", "") + entry.get("text", ""):
            console.append(entry.get("text", ""))
    return decoded


def call(method, params=None, session=None):
    number = send(method, params, session)
    while True:
        message = receive()
        if message.get("id") == number:
            if "error" in message:
                raise RuntimeError(f"{method}: {message['error']}")
            return message.get("result", {})
        events.append(message)


def wait_for(method):
    for index, message in enumerate(events):
        if message.get("method") == method:
            del events[: index + 1]
            return message
    while True:
        message = receive()
        if message.get("method") == method:
            return message


target = call("Target.createTarget", {"url": "about:blank"})["targetId"]
session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
for domain in ("Page", "Runtime", "Log", "Network"):
    call(domain + ".enable", session=session)


def navigate(url):
    events.clear()
    call("Page.navigate", {"url": url}, session)
    wait_for("Page.loadEventFired")


def evaluate(expression):
    return call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session)["result"].get("value")


def submit(selector, fill=None):
    events.clear()
    script = ""
    if fill:
        script += f"document.querySelector({json.dumps(fill[0])}).value = {json.dumps(fill[1])};"
    script += f"document.querySelector({json.dumps(selector)}).submit(); true"
    evaluate(script)
    wait_for("Page.loadEventFired")


def wait_until(expression):
    """Polls `expression` in the page until it is true; False when the run's time is up."""
    while time.time() < deadline - 5:
        if evaluate(expression):
            return True
        time.sleep(0.2)
    return False


def post(request):
    """Sends one request outside the browser (as an app would) and returns its status."""
    sent = urllib.request.Request(request["url"], data=request["body"].encode(), headers=request["headers"],
                                  method="POST")
    try:
        with urllib.request.urlopen(sent, timeout=20) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def watch_live(live):
    """Opens the live page, waits for its stream, sends the requests, waits for the expected rows."""
    console.clear()
    navigate(base + live["path"])
    opened = wait_until("document.getElementById('live-status').dataset.state === 'open'")
    statuses = [post(request) for request in live["posts"]]
    expected = json.dumps(live["expect"])
    shown = wait_until(f"{expected}.every(t => document.getElementById('live-rows').innerText.includes(t))")
    return {"opened": opened, "statuses": statuses, "shown": shown, "console": list(console),
            "rows": evaluate("document.getElementById('live-rows').innerText"),
            "status": evaluate("document.getElementById('live-status').textContent")}


def run_step(step):
    """Opens a page, submits a form (after filling its fields) or follows a link (an SVG one too)."""
    console.clear()
    if "open" in step:
        navigate(base + step["open"])
    elif "submit" in step:
        for selector, value in step.get("fill", []):
            evaluate(f"document.querySelector({json.dumps(selector)}).value = {json.dumps(value)}; true")
        submit(step["submit"])
    elif "eval" in step:
        evaluate(step["eval"])
    elif "follow" in step:
        events.clear()
        evaluate(f"location.href = document.querySelector({json.dumps(step['follow'])}).getAttribute('href'); true")
        wait_for("Page.loadEventFired")
    elif "tabTo" in step:
        return dict(tab_to(step["tabTo"]), url=evaluate("location.href"),
                    html=evaluate("document.documentElement.outerHTML"), console=list(console))
    return {"url": evaluate("location.href"), "html": evaluate("document.documentElement.outerHTML"),
            "console": list(console)}


FOCUSED = """(e => e && e !== document.body ? e.tagName.toLowerCase() + " " + (e.getAttribute("href") || e.name ||
  e.textContent.trim().slice(0, 40)) : "")(document.activeElement)"""


def press(key):
    """Presses and releases `key` (Tab or Enter) as a keyboard does."""
    params = {"key": key, "code": key, "windowsVirtualKeyCode": {"Tab": 9, "Enter": 13}[key]}
    if key == "Enter":
        params["text"] = "\r"
    call("Input.dispatchKeyEvent", dict(params, type="keyDown"), session)
    call("Input.dispatchKeyEvent", dict(params, type="keyUp"), session)


def tab_to(selector):
    """Presses Tab until the focused element matches `selector` (at most 300 times), recording what
    each press focused and whether the focus is drawn; then presses Enter and waits for the page it
    opens."""
    trail = []
    matches = f"document.activeElement && document.activeElement.matches({json.dumps(selector)})"
    while len(trail) < 300 and not evaluate(matches):
        press("Tab")
        trail.append(evaluate(FOCUSED))
    reached = bool(evaluate(matches))
    outline = evaluate("getComputedStyle(document.activeElement).outlineStyle") if reached else ""
    if reached:
        events.clear()
        press("Enter")
        wait_for("Page.loadEventFired")
    return {"focus": trail, "reached": reached, "outline": outline}


MEASURE = """(() => {
  let smallest = [1000, "", ""];
  for (const el of document.querySelectorAll("body *")) {
    if (el.closest("title, option, datalist, script, style")) { continue; }
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    const box = el.getBoundingClientRect();
    if (!own || !box.width || !box.height) { continue; }
    let size = parseFloat(getComputedStyle(el).fontSize);
    const svg = el.closest("svg");
    if (svg) { size *= svg.getBoundingClientRect().width / svg.viewBox.baseVal.width; }
    if (size < smallest[0]) { smallest = [size, el.tagName, el.textContent.trim().slice(0, 40)]; }
  }
  const cut = [...document.querySelectorAll(".bars .label, td, th")].filter(el => el.scrollWidth > el.clientWidth + 1);
  return {smallest: smallest, width: document.documentElement.scrollWidth,
          background: getComputedStyle(document.body).backgroundColor,
          cut: cut.map(el => el.textContent.slice(0, 40))};
})()"""


def measure(width, height, path, dark=False):
    call("Emulation.setEmulatedMedia",
         {"features": [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]}, session)
    call("Emulation.setDeviceMetricsOverride",
         {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600}, session)
    navigate(base + path)
    found = evaluate(MEASURE)
    found["path"] = path
    return found


def history():
    return [entry["url"] for entry in call("Page.getNavigationHistory", session=session)["entries"]]


result = {}
try:
    base = config["base"]
    navigate(base + "/login?next=%2Fdashboard%2Fevents")
    result["signInPage"] = evaluate("document.documentElement.outerHTML")
    submit('form[action="/login"]', ('input[name="key"]', config["key"]))
    result["afterSignIn"] = {"url": evaluate("location.href"), "html": evaluate("document.documentElement.outerHTML")}
    result["cookies"] = call("Network.getCookies", {"urls": [base + "/"]}, session)["cookies"]
    result["steps"] = [run_step(step) for step in config.get("steps", [])]
    result["pages"] = []
    for path in config.get("pages", []):
        console.clear()
        navigate(base + path)
        result["pages"].append(
            {"path": path, "html": evaluate("document.documentElement.outerHTML"), "console": list(console)})
    for path, width, height, page in config.get("screenshots", []):
        call("Emulation.setDeviceMetricsOverride",
             {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600}, session)
        navigate(base + page)
        shape = {"format": "jpeg", "quality": 70} if path.endswith(".jpg") else {"format": "png"}
        shot = call("Page.captureScreenshot", dict(shape, captureBeyondViewport=True), session)
        with open(path, "wb") as file:
            file.write(base64.b64decode(shot["data"]))
    result["measured"] = [measure(*entry) for entry in config.get("measure", [])]
    if config.get("live"):
        result["live"] = watch_live(config["live"])
    navigate(base + "/")
    submit('form[action="/logout"]')
    result["afterSignOut"] = {"url": evaluate("location.href"), "html": evaluate("document.documentElement.outerHTML")}
    result["history"] = history()
    result["cookiesAfterSignOut"] = call("Network.getCookies", {"urls": [base + "/"]}, session)["cookies"]
except Exception as error:  # reported to the test, which fails with it
    result["error"] = f"{type(error).__name__}: {error}"
finally:
    try:
        send("Browser.close")
    except OSError:
        pass
    try:
        browser.wait(timeout=10)
    except subprocess.TimeoutExpired:
        browser.kill()
print(json.dumps(result))
