-- wrk script: POSTs native batches of 100 events with ids unique across threads and requests, so
-- every event is new to the collector (no de-duplication shortcut). Used by collector-load.sh.
-- ID_STYLE=random gives each event a random UUID-like id (as Segment, Mixpanel and other SDKs send)
-- instead of ids that sort together by request (as CoreTracker's time-ordered UUIDv7 ids do).
local counter = 0
local thread_id = 0
local threads = {}

function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  thread_id = tid
  math.randomseed(os.time() * 100 + tid)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. (os.getenv("COLLECTOR_KEY") or "")
end

local context = '{"appName":"Trendyol","appVersion":"7.12.0","appBuild":"712","osName":"iOS","osVersion":"17.4",'
  .. '"platform":"ios","deviceModel":"iPhone15,2","locale":"tr_TR","timeZone":"Europe/Istanbul",'
  .. '"libraryName":"CoreTracker","libraryVersion":"1.0.0"}'
local run = os.getenv("RUN_ID") or tostring(os.time())
local random_ids = os.getenv("ID_STYLE") == "random"
-- PURCHASES=n makes every n-th event of a batch a purchase of one item under a transaction id of its
-- own (the commerce facts' work at ingest); none by default.
local purchases = tonumber(os.getenv("PURCHASES") or "0") or 0

local function random_id()
  return string.format("%08x-%04x-4%03x-%04x-%06x%06x", math.random(0, 0x7fffffff), math.random(0, 0xffff),
    math.random(0, 0xfff), math.random(0x8000, 0xbfff), math.random(0, 0xffffff), math.random(0, 0xffffff))
end

function request()
  counter = counter + 1
  local now = os.time() * 1000
  local parts = {}
  for i = 1, 100 do
    local id = random_ids and random_id() or (run .. '-' .. thread_id .. '-' .. counter .. '-' .. i)
    local name, parameters = "product_viewed", '{"product_id":"p-' .. i
      .. '","price":129.9,"currency":"TRY","in_stock":true,"position":' .. i .. '}'
    if purchases > 0 and i % purchases == 0 then
      name, parameters = "purchase", '{"transaction_id":"T-' .. id .. '","currency":"TRY","value":129.9,'
        .. '"items":[{"item_id":"p-' .. i .. '","item_name":"Product ' .. i .. '","price":129.9,"quantity":1}]}'
    end
    parts[i] = '{"id":"' .. id .. '","name":"' .. name .. '",'
      .. '"kind":"action","timestamp":' .. now .. ',"utcOffsetMinutes":180,"anonymousId":"device-' .. thread_id
      .. '-' .. (counter % 500) .. '","sessionId":' .. now .. ',"parameters":' .. parameters .. '}'
  end
  local body = '{"sentAt":' .. now .. ',"context":' .. context .. ',"events":[' .. table.concat(parts, ",")
    .. '],"counters":[]}'
  return wrk.format(nil, nil, nil, body)
end

-- RETRY_AFTER=1: clients that honour a 503's Retry-After (as CoreTracker's delivery does): a
-- connection answered 503 waits the seconds it says before its next request, instead of sending the
-- next at once (which measures how fast the collector refuses, and takes the cores from the drain).
-- wrk keeps one script state per thread, so the wait is noted at the answer and taken by the next
-- request the thread writes: nearly always the same connection's.
if os.getenv("RETRY_AFTER") == "1" then
  local wait_ms = 0
  function response(status, headers, body)
    if status == 503 then
      wait_ms = 1000 * (tonumber(headers["retry-after"] or headers["Retry-After"] or "1") or 1)
    end
  end
  function delay()
    local wait = wait_ms
    wait_ms = 0
    return wait
  end
end

function done(summary, latency, requests)
  local seconds = summary.duration / 1000000
  -- Only the 2xx answers count: wrk counts every answer as a request, a refused batch (503 when
  -- the spool is full, or any status over 399) too, and it stored nothing.
  local failed = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  local events = (summary.requests - summary.errors.status) * 100
  io.write(string.format("RESULT events_per_s=%.0f p50_ms=%.2f p99_ms=%.2f requests=%d errors=%d non2xx=%d\n",
    events / seconds, latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.requests,
    failed, summary.errors.status))
end
